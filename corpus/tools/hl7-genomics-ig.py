#!/usr/bin/env python3
"""Render the FHIR Shorthand (FSH) examples of the HL7 Genomics Reporting IG as printed reports.

Usage: python3 hl7-genomics-ig.py <git-dir of HL7/genomics-reporting> [out-dir]

Reads input/fsh/examples/*.fsh from the HEAD commit (git show), parses the FSH instances
(GenomicReport, Variant, DiagnosticImplication, TherapeuticImplication, Genotype, Haplotype,
MolecularBiomarker, GenomicStudy, Specimen, ServiceRequest, Patient, Organization ...), and lays
out each example group as a plain-text genomic report: a header block with the example's own
(fictional) identifiers, then one section per observation with its coded components written with
the displays given in the FSH (or, where the example omits a display, the LOINC display the IG
uses elsewhere for the same code).  Only light framing (title line, section headings) is added.
"""
import os
import re
import subprocess
import sys
import textwrap

W = 95


def git_show(gd, path):
    return subprocess.run(["git", "--git-dir", gd, "show", "HEAD:" + path],
                          capture_output=True, text=True, check=True).stdout


def git_ls(gd, under):
    out = subprocess.run(["git", "--git-dir", gd, "ls-tree", "-r", "--name-only", "HEAD", under],
                         capture_output=True, text=True, check=True).stdout
    return [l for l in out.splitlines() if l.strip()]


# ---------------------------------------------------------------- FSH parsing
def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    out = []
    for line in text.splitlines():
        # remove // comments that are not inside a string and not part of a URL
        res, inq, i = "", False, 0
        while i < len(line):
            c = line[i]
            if c == '"' and (i == 0 or line[i - 1] != "\\"):
                inq = not inq
            if not inq and line.startswith("//", i) and (i == 0 or line[i - 1] != ":"):
                break
            res += c
            i += 1
        out.append(res.rstrip())
    return out


def parse_fsh(text):
    insts = []
    cur = None
    stack = []  # (indent, path) for indented rules
    for line in strip_comments(text):
        if not line.strip():
            continue
        m = re.match(r"^(Instance|InstanceOf|Description|Title|Usage):\s*(.*)$", line)
        if m:
            k, v = m.group(1), m.group(2).strip()
            if k == "Instance":
                cur = {"name": v, "of": "", "desc": "", "title": "", "rules": []}
                insts.append(cur)
                stack = []
            elif cur is not None:
                if k == "InstanceOf":
                    cur["of"] = v
                elif k in ("Description", "Title"):
                    cur["desc" if k == "Description" else "title"] = v.strip('"')
            continue
        if re.match(r"^(Profile|Extension|ValueSet|CodeSystem|Alias|RuleSet|Logical|Invariant|Mapping|Parent|Id)\s*:", line):
            cur = None
            continue
        m = re.match(r"^(\s*)\*\s+(.*)$", line)
        if not m or cur is None:
            continue
        ind = len(m.group(1))
        body = m.group(2)
        mm = re.match(r"^((?:[^\s=\[]|\[[^\]]*\])+)\s*=\s*(.*)$", body)
        path = (mm.group(1) if mm else body).strip()
        while stack and stack[-1][0] >= ind:
            stack.pop()
        full = ".".join([p for _, p in stack] + [path])
        if mm:
            cur["rules"].append((full, mm.group(2).strip()))
        stack.append((ind, path))
    return insts


def unq(s):
    return s.replace('\\"', '"').replace("\\n", "\n")


def parse_value(raw):
    raw = raw.strip()
    m = re.match(r'^Reference\(([^)]+)\)', raw)
    if m:
        return ("ref", m.group(1).strip())
    m = re.match(r'^"((?:[^"\\]|\\.)*)"$', raw)
    if m:
        return ("str", unq(m.group(1)))
    m = re.match(r'^([^\s"]*)#(\S+|"[^"]*")\s*(?:"((?:[^"\\]|\\.)*)")?', raw)
    if m:
        system, code, disp = m.group(1), m.group(2).strip('"'), m.group(3)
        return ("code", system, code, unq(disp) if disp else None)
    m = re.match(r"^(-?[\d.]+)\s*'([^']*)'\s*(?:\"([^\"]*)\")?", raw)
    if m:
        unit = m.group(2)
        return ("qty", m.group(1), "" if unit == "1" else unit, m.group(3))
    m = re.match(r"^-?[\d.]+$", raw)
    if m:
        return ("num", raw)
    if raw in ("true", "false"):
        return ("bool", raw)
    return ("raw", raw)


def code_label_map(gd):
    lab = {}
    for p in git_ls(gd, "input/fsh"):
        if not p.endswith(".fsh"):
            continue
        t = git_show(gd, p)
        for sys_, code, disp in re.findall(r'(\$\w+|[\w:/.-]+)#([\w.:*-]+)\s+"([^"]+)"', t):
            lab.setdefault(code, disp)
        # component slices defined in the profiles: the slice name describes the LOINC code
        for sl, code in re.findall(r'component\[([\w-]+)\]\.code\s*=\s*\$LNC#([\w-]+)', t):
            lab.setdefault(code, pretty_slice(sl))
    return lab


# ------------------------------------------------------------ instance model
SLICE_LABELS = {}


def pretty_slice(s):
    s = re.sub(r"([a-z])([A-Z])", r"\1 \2", s).replace("-", " ").replace("_", " ")
    s = s.strip()
    return s[:1].upper() + s[1:]


def disp_of(v, labels):
    if v is None:
        return ""
    if v[0] == "code":
        _, system, code, disp = v
        if disp:
            return disp
        if code in labels and system in ("$LNC", "$SCT", "http://loinc.org"):
            return labels[code]
        return code
    if v[0] == "qty":
        s = v[1] + (" " + v[2] if v[2] else "")
        return s
    if v[0] == "ref":
        return v[1]
    return v[1]


class Inst:
    def __init__(self, d, labels):
        self.name = d["name"]
        self.of = d["of"]
        self.desc = d["desc"]
        self.rules = d["rules"]
        self.labels = labels
        self.f = {}
        self.multi = {}
        self.components = []
        self._parse()

    def _parse(self):
        comps = {}
        order = []
        idx_counter = -1
        slice_counts = {}
        last_key = None
        for path, raw in self.rules:
            m = re.match(r"^component((?:\[[^\]]*\])*)(?:\.(.*))?$", path)
            if m:
                brackets = re.findall(r"\[([^\]]*)\]", m.group(1))
                sub = m.group(2) or ""
                key = None
                sl = None
                for b in brackets:
                    if b == "+":
                        if sl is None:
                            idx_counter += 1
                            key = ("i", idx_counter)
                        else:
                            slice_counts[sl] = slice_counts.get(sl, -1) + 1
                            key = ("s", sl, slice_counts[sl])
                    elif b == "=":
                        key = last_key if last_key is not None else ("i", max(idx_counter, 0))
                    elif b.isdigit():
                        key = ("i", int(b)) if sl is None else ("s", sl, int(b))
                    else:
                        sl = b
                        key = ("s", sl, slice_counts.get(sl, 0))
                if key is None:
                    key = ("i", 0) if idx_counter < 0 else ("i", idx_counter)
                    if idx_counter < 0:
                        idx_counter = 0
                if key not in comps:
                    comps[key] = {"slice": sl, "code": None, "vals": []}
                    order.append(key)
                if sl and not comps[key]["slice"]:
                    comps[key]["slice"] = sl
                last_key = key
                c = comps[key]
                v = parse_value(raw)
                if sub.startswith("code"):
                    if v[0] == "code" and (c["code"] is None or v[3]):
                        c["code"] = v
                    elif sub.endswith("text") and v[0] == "str":
                        c["code"] = ("code", "", v[1], v[1])
                elif sub.startswith("value"):
                    if "valueRange.low" in sub:
                        c["low"] = v[1]
                    elif "valueRange.high" in sub:
                        c["high"] = v[1]
                    elif sub.endswith(".unit") and v[0] == "str":
                        c["unit"] = v[1]
                    elif sub.endswith(".system") or sub.endswith(".version") or sub.endswith(".code"):
                        pass
                    else:
                        c["vals"].append(v)
                continue
            v = parse_value(raw)
            base = re.sub(r"\[[^\]]*\]", "", path)
            self.multi.setdefault(base, []).append(v)
            self.f.setdefault(base, v)
        for k in order:
            self.components.append(comps[k])

    def get(self, *paths):
        for p in paths:
            if p in self.f:
                return disp_of(self.f[p], self.labels)
        return ""

    def all(self, p):
        return [disp_of(v, self.labels) for v in self.multi.get(p, [])]

    def refs(self, p):
        return [v[1] for v in self.multi.get(p, []) if v[0] == "ref"]

    def value(self):
        for p in ("valueCodeableConcept.text", "valueCodeableConcept", "valueCodeableConcept.coding",
                  "valueString", "valueQuantity", "valueInteger", "valueBoolean"):
            if p in self.f:
                s = disp_of(self.f[p], self.labels)
                if p == "valueCodeableConcept.coding" and "valueCodeableConcept.text" in self.f:
                    continue
                return s
        if "valueQuantity.value" in self.f:
            u = self.get("valueQuantity.unit")
            return self.get("valueQuantity.value") + (" " + u if u else "")
        if "valueRange.low.value" in self.f:
            return self.get("valueRange.low.value") + " - " + self.get("valueRange.high.value")
        return ""

    def comp_rows(self):
        rows = []
        for c in self.components:
            label = ""
            if c["code"] is not None:
                _, system, code, disp = c["code"]
                label = disp or self.labels.get(code) or ""
                if not label and code:
                    label = pretty_slice(code)
            if not label and c["slice"]:
                label = pretty_slice(c["slice"])
            vals = []
            texts = [v[1] for v in c["vals"] if v[0] == "str"]
            for v in c["vals"]:
                d = disp_of(v, self.labels)
                if d and d not in vals:
                    vals.append(d)
            val = "; ".join(vals)
            if "low" in c:
                lo, hi = c.get("low", ""), c.get("high", "")
                val = lo if (not hi or hi == lo) else lo + " - " + hi
            if c.get("unit") and val:
                val += " " + c["unit"]
            if label or val:
                rows.append((label, val))
        return rows


# -------------------------------------------------------------- text helpers
def wrap(s, indent=0, width=W):
    out = []
    for para in str(s).split("\n"):
        out.extend(textwrap.wrap(para, width=width - indent, break_long_words=True,
                                 break_on_hyphens=False) or [""])
    return [" " * indent + l for l in out]


def kv(label, value, lw=40, indent=2):
    lines = wrap(value, indent + lw + 1)
    first = lines[0].strip() if lines else ""
    res = [(" " * indent + (label + " ").ljust(lw, ".") + " " + first).rstrip()]
    res += [l for l in lines[1:] if l.strip()]
    return res


def rule(ch="-"):
    return ch * W


# ------------------------------------------------------------------- render
OBS_TYPES = {"Variant", "DiagnosticImplication", "TherapeuticImplication", "Genotype", "Haplotype",
             "MolecularBiomarker", "MolecularConsequence", "RegionStudied", "Observation",
             "GenomicFinding", "SequencePhaseRelationship", "Implication"}

HEADINGS = {
    "Variant": "VARIANT",
    "DiagnosticImplication": "DIAGNOSTIC IMPLICATION",
    "TherapeuticImplication": "THERAPEUTIC IMPLICATION",
    "Genotype": "GENOTYPE",
    "Haplotype": "HAPLOTYPE",
    "MolecularBiomarker": "MOLECULAR BIOMARKER",
    "MolecularConsequence": "MOLECULAR CONSEQUENCE",
    "RegionStudied": "REGION STUDIED",
    "SequencePhaseRelationship": "SEQUENCE PHASE RELATIONSHIP",
    "Observation": "OBSERVATION",
}

SKIP_LABELS = {"Genomic coord system"}


def variant_gene(o):
    for lab, val in o.comp_rows():
        if lab.lower().startswith("gene studied") or lab == "Gene studied":
            return val
    return ""


def render_obs(o, n, by_name):
    head = HEADINGS.get(o.of, o.of.upper())
    title = o.get("code", "code.coding", "code.text")
    gene = variant_gene(o) if o.of in ("Variant", "Haplotype", "Genotype") else ""
    hl = "%d. %s" % (n, head)
    if gene:
        hl += " - " + gene
    out = [hl]
    val = o.value()
    if title and title not in ("therapeutic-implication", "diagnostic-implication",
                               "molecular-consequence") and o.of not in ("Variant",):
        out += kv("Test / code", title)
    if val:
        out += kv("Result", val)
    for lab, v in o.comp_rows():
        if lab in SKIP_LABELS or not v:
            continue
        out += kv(lab or "-", v)
    meth = o.get("method")
    if meth:
        out += kv("Method", meth)
    interp = o.get("interpretation")
    if interp:
        out += kv("Interpretation", interp)
    der = o.refs("derivedFrom") + o.refs("hasMember")
    if der:
        names = []
        for r in der:
            t = by_name.get(r.split("/")[-1])
            if t is not None:
                g = variant_gene(t)
                names.append((HEADINGS.get(t.of, t.of).title() + (" " + g if g else "")).strip())
        if names:
            out += kv("Derived from", ", ".join(dict.fromkeys(names)))
    for nt in o.all("note.text"):
        out += ["  Note:"] + wrap(nt, 4)
    return out


def compact_variant(o, n):
    d = {}
    for lab, v in o.comp_rows():
        d.setdefault(lab.lower(), v)
    def pick(*keys):
        for k in d:
            for kk in keys:
                if k.startswith(kk):
                    return d[k]
        return ""
    gene = pick("gene studied")
    c = pick("representative coding hgvs", "dna change (c.hgvs)", "variation code",
             "discrete genetic variant")
    pr = pick("representative protein hgvs", "amino acid change")
    g = pick("genomic hgvs", "genomic dna change")
    head = "%d. VARIANT - %s   %s" % (n, gene, c)
    if pr:
        head += "   " + pr
    rest = []
    for lab, keys in (("Genomic", ("genomic hgvs", "genomic dna change")),
                      ("Type", ("coding change type", "dna change type")),
                      ("Source", ("genomic source class",)),
                      ("Zygosity", ("allelic state",)),
                      ("VAF", ("sample allelic frequency", "sample vaf")),
                      ("Read depth", ("allelic read depth",)),
                      ("Transcript", ("representative transcript", "transcript reference"))):
        v = pick(*keys)
        if v:
            rest.append(lab + ": " + v)
    if o.get("method"):
        rest.append("Method: " + o.get("method"))
    return wrap(head) + wrap("; ".join(rest), 5)


def variant_table(vs):
    cols = [("Gene", 9), ("Position", 11), ("Ref", 4), ("Alt", 4), ("Zygosity", 13), ("Build", 7),
            ("Genomic ref. seq.", 14)]
    rows = []
    for o in vs:
        d = {lab: v for lab, v in o.comp_rows()}
        def pick(*keys):
            for k in d:
                for kk in keys:
                    if k.lower().startswith(kk.lower()):
                        return d[k]
            return ""
        rows.append([pick("Gene studied"), pick("Genomic allele start-end", "Variant exact start",
                                                 "Exact start"),
                     pick("Ref nucleotide", "Genomic ref allele"), pick("Alt allele",
                                                                         "Genomic alt allele"),
                     pick("Allelic state"), pick("Human reference sequence assembly"),
                     pick("Genomic reference sequence")])
    keep = [k for k in range(len(cols)) if any(r[k] for r in rows)]
    cols = [cols[k] for k in keep]
    rows = [[r[k] for k in keep] for r in rows]
    out = []
    hdr = "  " + "  ".join(c.ljust(w) for c, w in cols)
    out.append(hdr.rstrip())
    out.append("  " + "  ".join("-" * w for c, w in cols))
    for r in rows:
        out.append(("  " + "  ".join(str(x)[:w].ljust(w) for x, (c, w) in zip(r, cols))).rstrip())
    return out


def resolve_urn(insts, bundle_rules):
    m = {}
    cur_url = None
    for path, raw in bundle_rules:
        if path.endswith("fullUrl"):
            cur_url = parse_value(raw)[1]
        elif path.endswith(".resource") and cur_url:
            v = parse_value(raw)
            name = v[1] if v[0] in ("raw", "str") else disp_of(v, {})
            m[cur_url] = name
            if cur_url.startswith("urn:uuid:"):
                m[cur_url[9:]] = name
            m[cur_url.split("/")[-1]] = name
    return m


def patient_block(p):
    out = []
    if p is None:
        return ["Patient: (example patient - identifiers and demographics not given)"]
    fam = p.get("name.family")
    giv = " ".join(p.all("name.given"))
    nm = (fam.upper() + ", " + giv).strip(", ") if fam or giv else ""
    mrn = p.get("identifier.value")
    left = []
    if nm:
        left.append("Patient: " + nm)
    if p.get("birthDate"):
        left.append("DOB: " + p.get("birthDate"))
    if p.get("gender"):
        left.append("Sex: " + p.get("gender"))
    if mrn:
        left.append("MRN: " + mrn)
    if not left:
        return ["Patient: (example patient - identifiers and demographics not given)"]
    line = ""
    for piece in left:
        if len(line) + len(piece) + 4 > W:
            out.append(line)
            line = ""
        line = (line + "    " + piece) if line else piece
    out.append(line)
    return out


def render_doc(title, insts, labels, bundle=None, extra=None):
    by_name = {i.name: i for i in insts}
    if bundle is not None:
        for url, nm in resolve_urn(insts, bundle.rules).items():
            if nm in by_name:
                by_name[url] = by_name[nm]
    def look(ref):
        r = ref.split("/")[-1] if not ref.startswith("urn:uuid:") else ref
        return by_name.get(r) or by_name.get(ref.replace("urn:uuid:", ""))
    reports = [i for i in insts if i.of in ("GenomicReport", "DiagnosticReport")]
    rep = reports[0] if reports else None
    pats = [i for i in insts if i.of == "Patient"]
    pat = pats[0] if pats else None
    if rep is not None and rep.refs("subject"):
        t = look(rep.refs("subject")[0])
        if t is not None and t.of == "Patient":
            pat = t
    orgs = [i for i in insts if i.of == "Organization"]
    pracs = {i.name: i for i in insts if i.of == "Practitioner"}
    out = [title, rule("=")]
    lab = ""
    if orgs:
        lab = orgs[-1].get("name")
    if lab:
        out.append("Performing laboratory: " + lab)
    out += patient_block(pat)
    if rep is not None:
        bits = []
        if rep.get("identifier.value"):
            bits.append("Accession: " + rep.get("identifier.value"))
        if rep.get("effectiveDateTime"):
            bits.append("Collected/effective: " + rep.get("effectiveDateTime"))
        if rep.get("issued"):
            bits.append("Issued: " + rep.get("issued")[:10])
        if rep.get("status"):
            bits.append("Status: " + rep.get("status"))
        if bits:
            out.append("    ".join(bits))
        code = rep.get("code", "code.coding", "code.coding.display")
        if code and code not in ("51969-4",):
            out.append("Report: " + code)
        elif code:
            out.append("Report: Genetic analysis report (LOINC 51969-4)")
    specs = [i for i in insts if i.of == "Specimen"]
    for s in specs[:2]:
        t = s.get("type", "type.text", "type.coding")
        col = s.get("collection.collected", "collection.collectedDateTime")
        line = "Specimen: " + (t or "see specimen ID")
        if col:
            line += "    Collected: " + col
        if s.get("identifier.value"):
            line += "    ID: " + s.get("identifier.value")
        out.append(line)
    srs = [i for i in insts if i.of == "ServiceRequest"]
    for sr in srs[:1]:
        c = sr.get("code.text", "code", "code.coding")
        if c and c != "51969-4":
            out += wrap("Test requested: " + c)
        rsn = sr.get("reasonCode.text", "reasonCode", "reasonCode.coding")
        if rsn:
            out += wrap("Reason for testing: " + rsn)
        req = sr.refs("requester")
        if req and req[0].split("/")[-1] in pracs:
            pr = pracs[req[0].split("/")[-1]]
            out.append("Ordering provider: " + " ".join(pr.all("name.given")) + " " +
                       pr.get("name.family"))
    out.append(rule("="))
    if extra:
        out += extra
    # ordered observations
    ordered = []
    seen = set()
    def add(o):
        if o is None or o.name in seen or o.of not in OBS_TYPES:
            return
        seen.add(o.name)
        ordered.append(o)
        for r in o.refs("hasMember"):
            add(look(r))
    if rep is not None:
        for r in rep.refs("result"):
            add(look(r))
    for o in insts:
        add(o)
    prio = {"Variant": 0, "DiagnosticImplication": 1, "TherapeuticImplication": 2,
            "MolecularBiomarker": 3, "Genotype": 4, "Haplotype": 5}
    ordered.sort(key=lambda o: prio.get(o.of, 9))
    variants = [o for o in ordered if o.of == "Variant"]
    many = len(variants) > 14
    compact = 6 < len(variants) <= 14
    if ordered:
        sumlines = []
        for o in ordered:
            if o.of in ("DiagnosticImplication",):
                rows = dict(o.comp_rows())
                cls = rows.get("Genetic variation clinical significance") or rows.get(
                    "Genetic variation clinical significance [Imp]") or ""
                cond = rows.get("Associated phenotype") or rows.get(
                    "Genetic disease assessed") or ""
                for k, v in rows.items():
                    if not cls and "significance" in k.lower():
                        cls = v
                    if not cond and ("phenotype" in k.lower() or "disease" in k.lower()):
                        cond = v
                der = [look(r) for r in o.refs("derivedFrom")]
                g = ", ".join(x for x in (variant_gene(d) for d in der if d is not None) if x)
                if cls or cond:
                    sumlines.append("  - " + " / ".join(x for x in (g, cls, cond) if x))
        if sumlines:
            out += ["SUMMARY OF FINDINGS"] + sumlines[:12] + [""]
    n = 0
    if many:
        out += ["DETECTED VARIANTS (%d)" % len(variants)] + variant_table(variants) + [""]
    for o in ordered:
        if many and o.of == "Variant":
            continue
        n += 1
        if compact and o.of == "Variant":
            out += compact_variant(o, n) + [""]
            continue
        out += render_obs(o, n, by_name) + [""]
    # genomic study / methods
    for st in [i for i in insts if i.of == "GenomicStudy"]:
        out += ["METHODS / GENOMIC STUDY", rule()]
        c = st.get("code.text", "code")
        if c:
            out += kv("Study", c)
        rc = st.get("reasonCode", "reasonCode.text")
        if rc:
            out += kv("Reason", rc)
        if st.get("performedDateTime"):
            out += kv("Performed", st.get("performedDateTime"))
        for nt in st.all("note.text"):
            out += wrap(nt, 2)
        out.append("")
    for an in [i for i in insts if i.of == "GenomicStudyAnalysis"]:
        out += ["ANALYSIS: " + (an.desc or an.name)]
        for lab, key in (("Method type", "extension.valueCodeableConcept"),):
            pass
        vals = [disp_of(v, labels) for p, lst in an.multi.items() if "valueCodeableConcept" in p
                for v in lst]
        if vals:
            out += kv("Methods / change types / genes", ", ".join(dict.fromkeys(vals)))
        for nt in an.all("note.text"):
            out += kv("Note", nt)
        out.append("")
    # signatures
    out.append("<<TAIL>>")
    if rep is not None:
        sig = []
        for r in rep.refs("performer") + rep.refs("resultsInterpreter"):
            pr = pracs.get(r.split("/")[-1])
            if pr is not None:
                nm = " ".join(pr.all("name.given")) + " " + pr.get("name.family")
                pref = pr.get("name.prefix")
                suf = pr.get("name.suffix")
                sig.append(" ".join(x for x in (pref, nm.strip(), suf) if x))
        if sig:
            out += [rule()]
            for s in dict.fromkeys(sig):
                out += ["Electronically signed: " + s]
        conc = rep.get("conclusion")
        if conc:
            out += ["", "CONCLUSION"] + wrap(conc, 2)
        cc = rep.all("conclusionCode")
        if cc:
            out += ["Overall interpretation: " + ", ".join(dict.fromkeys(cc))]
    return out


def paginate(lines, maxpages=4, per=52):
    wrapped = []
    for l in lines:
        if len(l) > W:
            ind = len(l) - len(l.lstrip())
            wrapped += wrap(l.strip(), ind)
        else:
            wrapped.append(l)
    lines = wrapped
    if "<<TAIL>>" in lines:
        k = lines.index("<<TAIL>>")
        body, tail = lines[:k], lines[k + 1:]
        limit = maxpages * per - len(tail)
        if len(body) > limit:
            cut = max(i for i in range(limit) if not body[i].strip())
            body = body[:cut]
        lines = body + tail
    pages, cur = [], []
    for l in lines:
        if len(cur) >= per:
            pages.append(cur)
            cur = []
        cur.append(l)
    if cur:
        pages.append(cur)
    pages = pages[:maxpages]
    return "\n\f\n".join("\n".join(p).rstrip() for p in pages).rstrip() + "\n"


GROUPS = [
    # (doc key, title, files)
    ("cgexample", "GENETIC ANALYSIS REPORT", ["bundle-cgexample.fsh"]),
    ("oncology-r4", "ONCOLOGY GENOMIC REPORT", ["bundle-oncologyexamples-r4.fsh"]),
    ("oncology-report", "SOMATIC TUMOUR SEQUENCING REPORT", ["bundle-oncology-report-example.fsh"]),
    ("oncology-diagnostic", "MOLECULAR DIAGNOSTIC REPORT", ["bundle-oncology-diagnostic.fsh"]),
    ("pgx", "PHARMACOGENOMIC TEST REPORT", ["bundle-pgxexample.fsh",
                                            "med-usage-impact-task-pgx-example.fsh"]),
    ("cyp2c19", "CYP2C19 GENOTYPING REPORT", ["bundle-CYP2C19.fsh"]),
    ("hla-full", "HLA TYPING REPORT (CLASS I)", ["bundle-CG-IG-HLA-FullBundle-01.fsh"]),
    ("hla-a", "HLA-A GENOTYPING REPORT", ["diagnosticreport-hla-glstring-r4.fsh",
                                          "genotype-hla-a-glstring-r4.fsh",
                                          "haplotype-hla-a-1-r4.fsh", "servicerequest-hla-a-r4.fsh",
                                          "specimen-hla-r4.fsh"]),
    ("somatic", "COMPREHENSIVE GENOMIC PROFILING - SOMATIC REPORT", ["somaticReportPDFexamples.fsh"]),
    ("smn", "SMN1/SMN2 COPY NUMBER ANALYSIS", ["SMN1SMN2_CNVexample.fsh"]),
    ("repeat", "REPEAT EXPANSION ANALYSIS", ["RepeatExpansionExamples.fsh"]),
    ("snv", "GENETIC VARIANT RESULT", ["SNVexample.fsh", "variant-with-molec-consequences.fsh"]),
    ("comphet", "GENETIC ANALYSIS REPORT - COMPOUND HETEROZYGOSITY",
     ["bundle-compound-heterozygote.fsh", "bundle-complexVariant-nonHGVS.fsh"]),
    ("idh", "GENETIC TEST RESULT - DIAGNOSTIC IMPLICATION", ["obs-idh-ex.fsh"]),
    ("molcons", "VARIANT ANNOTATION - MOLECULAR CONSEQUENCES",
     ["molec-conseq1.fsh", "molec-conseq2.fsh", "molec-conseq3.fsh", "molec-conseq4.fsh"]),
    ("study", "GENOMIC STUDY - METHODS SUMMARY", ["genomic-study-examples.fsh"]),
]


def main():
    gd = sys.argv[1]
    outdir = sys.argv[2] if len(sys.argv) > 2 else "corpus/sources/hl7-genomics-ig"
    labels = code_label_map(gd)
    base = "input/fsh/examples/"
    shared = [Inst(d, labels) for d in parse_fsh(git_show(gd, base + "ExampleReusableResources.fsh"))]
    docs = []
    n = 0
    for key, title, files in GROUPS:
        insts = []
        for f in files:
            insts += [Inst(d, labels) for d in parse_fsh(git_show(gd, base + f))]
        names = {i.name for i in insts}
        refd = set()
        for i in insts:
            for vs in i.multi.values():
                for v in vs:
                    if v[0] == "ref":
                        refd.add(v[1].split("/")[-1])
        insts += [s for s in shared if s.name in refd and s.name not in names]
        bundles = [i for i in insts if i.of == "Bundle"]
        lines = render_doc(title, insts, labels, bundle=bundles[0] if bundles else None)
        n += 1
        did = "hl7-genomics-ig-%d" % n
        with open(os.path.join(outdir, did + ".txt"), "w", encoding="utf-8") as fh:
            fh.write(paginate(lines))
        docs.append((did, title, ", ".join(base + f for f in files)))
    with open(os.path.join(outdir, "docs.toml"), "w", encoding="utf-8") as fh:
        for did, title, origin in docs:
            fh.write('[[doc]]\nid = "%s"\ntype = "GENOMIC_REPORT"\nfile = "%s.txt"\n'
                     'origin = "%s"\ntitle = "%s"\n\n' % (did, did, origin, title))


if __name__ == "__main__":
    main()
