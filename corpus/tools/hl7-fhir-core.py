"""Build corpus/sources/hl7-fhir-core from the FHIR core specification examples.

Usage: python3 hl7-fhir-core.py <path to the fetched git directory> [<output folder>]

The HL7/fhir repository is too large to fetch here, so the examples are read from
grzhan/fhir-zh-cn, a fork of HL7/fhir whose source/ example files are the unchanged HL7 ones
(the fork only translates the narrative pages).  Read with `git show HEAD:...`:
  source/diagnosticreport/*example*.xml, bundle-lipids.xml, bundle-lri-example.xml,
  diagnosticreport-micro1.xml, and source/observation/observation-example-*.xml and
  source/patient/patient-example*.xml to resolve referenced results and patients.
Each laboratory / pathology DiagnosticReport becomes one printed report.  Where the example
has its own preformatted narrative (<pre>) or narrative paragraphs, that text is printed;
otherwise the report header (performer, patient, identifiers, dates, specimen) and an aligned
results table are built from the resources (test, value, units, reference range, flag),
nested results (hasMember, e.g. microbiology isolates and susceptibilities) indented.
Not used: the imaging examples, the genetics examples, the PDF-only gingival (veterinary)
examples and the two large "lab-text"/"general" bundles, which are described as snapshots of
a live laboratory feed (real, if anonymised, data).
"""
import json
import os
import re
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET

SRC = "hl7-fhir-core"
NS = "{http://hl7.org/fhir}"
XH = "{http://www.w3.org/1999/xhtml}"
W = 92

REPORTS = [
    ("source/diagnosticreport/diagnosticreport-example.xml", "101", "LAB_REPORT"),
    ("source/diagnosticreport/bundle-lipids.xml", None, "LAB_REPORT"),
    ("source/diagnosticreport/diagnosticreport-example-f001-bloodexam.xml", "f001", "LAB_REPORT"),
    ("source/diagnosticreport/diagnosticreport-example-f202-bloodculture.xml", "f202",
     "LAB_REPORT"),
    ("source/diagnosticreport/diagnosticreport-micro1.xml", "micro", "LAB_REPORT"),
    ("source/diagnosticreport/diagnosticreport-example-ghp.xml", "ghp", "LAB_REPORT"),
    ("source/diagnosticreport/bundle-lri-example.xml", None, "LAB_REPORT"),
    ("source/diagnosticreport/diagnosticreport-example-lipid-panel.xml", None, "LAB_REPORT"),
    ("source/diagnosticreport/diagnosticreport-example-papsmear.xml", "pap", "PATHOLOGY_REPORT"),
    ("source/diagnosticreport/dr-uslab-example1.xml", None, "LAB_REPORT"),
]


def git(repo, *args):
    r = subprocess.run(["git", "--git-dir", repo, *args], capture_output=True)
    return r.stdout if r.returncode == 0 else b""


def v(el, path):
    if el is None:
        return ""
    x = el.find(path.replace("/", "/" + NS).join(["", ""]) if False else
                "/".join(NS + p for p in path.split("/")))
    return x.get("value", "") if x is not None else ""


def find(el, path):
    return el.find("/".join(NS + p for p in path.split("/"))) if el is not None else None


def findall(el, path):
    return el.findall("/".join(NS + p for p in path.split("/"))) if el is not None else []


def cc_text(el):
    if el is None:
        return ""
    t = v(el, "text")
    if t:
        return t
    for c in findall(el, "coding"):
        if v(c, "display"):
            return v(c, "display")
    for c in findall(el, "coding"):
        if v(c, "code"):
            return v(c, "code")
    return ""


def resources(root):
    """Yield every resource element in a file: the root, bundle entries, contained."""
    out = []

    def walk(res):
        out.append(res)
        for c in findall(res, "contained"):
            for r in c:
                out.append(r)
    if root.tag == NS + "Bundle":
        for e in findall(root, "entry"):
            r = find(e, "resource")
            if r is not None and len(r):
                walk(r[0])
    else:
        walk(root)
    return out


def fmt_date(s):
    m = re.match(r"(\d{4})-(\d\d)-(\d\d)(?:T(\d\d):(\d\d))?", s or "")
    if not m:
        return s or ""
    d = f"{m.group(3)}/{m.group(2)}/{m.group(1)}"
    if m.group(4):
        d += f" {m.group(4)}:{m.group(5)}"
    return d


def value_of(o):
    q = find(o, "valueQuantity")
    if q is not None:
        cmp = v(q, "comparator")
        return cmp + v(q, "value"), v(q, "unit") or v(q, "code")
    c = find(o, "valueCodeableConcept")
    if c is not None:
        return cc_text(c), ""
    for k in ("valueString", "valueBoolean", "valueInteger", "valueDateTime"):
        if v(o, k):
            return v(o, k), ""
    r = find(o, "valueRatio")
    if r is not None:
        return f"{v(r, 'numerator/value')}:{v(r, 'denominator/value')}", ""
    da = find(o, "dataAbsentReason")
    if da is not None:
        return "(" + cc_text(da) + ")", ""
    return "", ""


def ref_range(o):
    rr = find(o, "referenceRange")
    if rr is None:
        return ""
    if v(rr, "text"):
        return v(rr, "text")
    lo, hi = v(rr, "low/value"), v(rr, "high/value")
    if lo and hi:
        return f"{lo} - {hi}"
    if hi:
        return f"<= {hi}"
    if lo:
        return f">= {lo}"
    return ""


def flag(o):
    it = find(o, "interpretation")
    if it is None:
        return ""
    codes = [v(c, "code") for c in findall(it, "coding")]
    return codes[0] if codes and codes[0] else cc_text(it)


class Index:
    def __init__(self):
        self.by = {}

    def add(self, res, fullurl=None):
        rid = v(res, "id")
        typ = res.tag.replace(NS, "")
        self.by[(typ, rid)] = res
        if fullurl:
            self.by[fullurl] = res

    def get(self, ref, contained=None):
        if not ref:
            return None
        if ref.startswith("#") and contained is not None:
            for c in findall(contained, "contained"):
                for r in c:
                    if v(r, "id") == ref[1:]:
                        return r
        if ref in self.by:
            return self.by[ref]
        m = re.search(r"([A-Za-z]+)/([^/]+)$", ref)
        if m:
            return self.by.get((m.group(1), m.group(2)))
        return None


def patient_lines(idx, dr):
    ref = v(dr, "subject/reference")
    disp = v(dr, "subject/display")
    p = idx.get(ref, dr)
    if p is None or p.tag != NS + "Patient":
        return [f"Patient: {disp}"] if disp else []
    n = find(p, "name")
    name = v(n, "text") if n is not None else ""
    if not name and n is not None:
        fam = v(n, "family")
        giv = " ".join(g.get("value", "") for g in findall(n, "given"))
        name = f"{fam}, {giv}".strip(", ")
    ids = [v(i, "value") for i in findall(p, "identifier") if v(i, "value")]
    line = f"Patient: {name or disp}"
    extra = []
    if v(p, "birthDate"):
        extra.append(f"DOB: {fmt_date(v(p, 'birthDate'))}")
    if v(p, "gender"):
        extra.append(f"Sex: {v(p, 'gender')}")
    if ids:
        extra.append(f"ID: {ids[0]}")
    return [line + ("   " + "   ".join(extra) if extra else "")]


def narrative(dr):
    div = find(dr, "text")
    if div is None:
        return None
    div = div.find(XH + "div")
    if div is None:
        return None
    pre = div.find(XH + "pre")
    if pre is not None:
        head = div.find(XH + "h3")
        lines = []
        if head is not None:
            lines.append("".join(head.itertext()).strip())
            lines.append("")
        lines += [ln.rstrip() for ln in "".join(pre.itertext()).strip("\n").splitlines()]
        tail = [("".join(p.itertext())).strip() for p in div.findall(XH + "p")]
        lines += [""] + [t for t in tail if t]
        return lines
    ps = div.findall(XH + "p")
    if ps and v(find(dr, "text"), "status") == "additional":
        lines = []
        for p in ps:
            buf = p.text or ""
            for ch in p:
                if ch.tag == XH + "br":
                    lines.append(buf.rstrip())
                    buf = ch.tail or ""
                else:
                    buf += "".join(ch.itertext()) + (ch.tail or "")
            lines.append(buf.rstrip())
            lines.append("")
        return lines
    return None


def result_rows(idx, dr, obs, depth, seen):
    rows = []
    key = id(obs)
    if key in seen:
        return rows
    seen.add(key)
    name = cc_text(find(obs, "code"))
    val, unit = value_of(obs)
    pad = "  " * depth
    label = (pad + name)
    if len(label) > 42 or len(val) > 16:
        rows.append(f"{label}")
        if val:
            rows += textwrap.wrap(f"{val} {unit}".rstrip()
                                  + (f"   (ref {ref_range(obs)})" if ref_range(obs) else "")
                                  + (f"   [{flag(obs)}]" if flag(obs) else ""), W,
                                  initial_indent=pad + "    ", subsequent_indent=pad + "      ")
    else:
        rows.append(f"{label:<42} {val:>16} {unit:<12} {ref_range(obs):<14} {flag(obs)}".rstrip())
    for comp in findall(obs, "component"):
        cv, cu = value_of(comp)
        rows.append(f"{pad + '  ' + cc_text(find(comp, 'code')):<42} {cv:>16} {cu:<12}"
                    f" {ref_range(comp):<14} {flag(comp)}".rstrip())
    for n in findall(obs, "note"):
        rows += textwrap.wrap(v(n, "text"), W - 8, initial_indent=pad + "    Note: ",
                              subsequent_indent=pad + "          ")
    for hm in findall(obs, "hasMember") + findall(obs, "related/target"):
        child = idx.get(v(hm, "reference"), dr)
        if child is not None:
            rows += result_rows(idx, dr, child, depth + 1, seen)
    return rows


def render(idx, dr, pre_lines=None):
    if pre_lines:
        # the example's own printed narrative: print it as is (its header block is the
        # report's own); a title line only where the narrative has none
        out = [] if "REPORT" in " ".join(pre_lines[:8]).upper() else \
            [cc_text(find(dr, "code")).upper(), ""]
        out += pre_lines
        txt = "\n".join(x.rstrip() for x in out)
        return re.sub(r"\n{3,}", "\n\n", txt).strip("\n") + "\n"
    out = []
    perf = v(dr, "performer/display")
    if not perf:
        org = idx.get(v(dr, "performer/reference"), dr)
        perf = v(org, "name") if org is not None else ""
    if perf:
        out.append(perf.upper())
    title = cc_text(find(dr, "code")) or "Diagnostic report"
    out.append(f"REPORT: {title}")
    out.append("=" * W)
    out += patient_lines(idx, dr)
    ids = [v(i, "value") for i in findall(dr, "identifier") if v(i, "value")]
    meta = []
    if ids:
        meta.append(f"Report no.: {ids[0]}")
    meta.append(f"Status: {v(dr, 'status').upper()}")
    cat = [cc_text(c) for c in findall(dr, "category") if cc_text(c)]
    if cat:
        meta.append(f"Section: {cat[0]}")
    out.append("   ".join(meta))
    eff = v(dr, "effectiveDateTime") or v(dr, "effectivePeriod/start")
    line = []
    if eff:
        line.append(f"Collected: {fmt_date(eff)}")
    if v(dr, "issued"):
        line.append(f"Issued: {fmt_date(v(dr, 'issued'))}")
    if line:
        out.append("   ".join(line))
    specs = []
    for s in findall(dr, "specimen"):
        sp = idx.get(v(s, "reference"), dr)
        specs.append(cc_text(find(sp, "type")) if sp is not None else v(s, "display"))
    if specs:
        out.append("Specimen: " + "; ".join(x for x in specs if x))
    out.append("=" * W)
    if pre_lines:
        out += pre_lines
    else:
        out.append(f"{'Test':<42} {'Result':>16} {'Units':<12} {'Reference':<14} Flag")
        out.append("-" * W)
        seen = set()
        for r in findall(dr, "result"):
            o = idx.get(v(r, "reference"), dr)
            if o is None:
                if v(r, "display"):
                    out.append(v(r, "display"))
                continue
            out += result_rows(idx, dr, o, 0, seen)
        out.append("-" * W)
    concl = v(dr, "conclusion")
    if concl:
        out.append("")
        out += textwrap.wrap("Conclusion: " + concl, W)
    for cc in findall(dr, "conclusionCode"):
        out.append("  " + cc_text(cc))
    interp = v(dr, "resultsInterpreter/display")
    if interp:
        out.append("")
        out.append(f"Reported by: {interp}")
    txt = "\n".join(x.rstrip() for x in out)
    return re.sub(r"\n{3,}", "\n\n", txt).strip("\n") + "\n"


def main():
    repo = sys.argv[1]
    out = sys.argv[2] if len(sys.argv) > 2 else os.path.join(
        os.path.dirname(__file__), "..", "sources", SRC)
    names = git(repo, "ls-tree", "-r", "--name-only", "HEAD", "source/observation",
                "source/patient", "source/diagnosticreport", "source/specimen",
                "source/organization").decode().splitlines()
    idx = Index()
    roots = {}
    for f in names:
        if not f.endswith(".xml") or "example" not in f or "lab-text" in f or "general" in f:
            continue
        data = git(repo, "show", "HEAD:" + f)
        try:
            root = ET.fromstring(data.decode("utf-8-sig"))
        except ET.ParseError:
            continue
        roots[f] = root
        if root.tag == NS + "Bundle":
            for e in findall(root, "entry"):
                r = find(e, "resource")
                if r is not None and len(r):
                    idx.add(r[0], v(e, "fullUrl"))
        else:
            idx.add(root)
    for f in ("source/diagnosticreport/bundle-lipids.xml",
              "source/diagnosticreport/bundle-lri-example.xml",
              "source/diagnosticreport/diagnosticreport-micro1.xml"):
        data = git(repo, "show", "HEAD:" + f)
        if data:
            root = ET.fromstring(data.decode("utf-8-sig"))
            roots[f] = root
            for r in resources(root):
                idx.add(r)
            if root.tag == NS + "Bundle":
                for e in findall(root, "entry"):
                    r = find(e, "resource")
                    if r is not None and len(r):
                        idx.add(r[0], v(e, "fullUrl"))
    docs = []
    for f, want, typ in REPORTS:
        root = roots.get(f)
        if root is None:
            data = git(repo, "show", "HEAD:" + f)
            if not data:
                continue
            root = ET.fromstring(data.decode("utf-8-sig"))
        drs = [r for r in resources(root) if r.tag == NS + "DiagnosticReport"
               and (want is None or v(r, "id") == want)]
        if not drs and root.tag == NS + "Observation":
            # a standalone laboratory Observation with components: print as a report
            drs = [root]
        for dr in drs[:1]:
            if dr.tag == NS + "Observation":
                txt = render_obs(idx, dr)
            else:
                txt = render(idx, dr, narrative(dr))
            docs.append((typ, f, txt))
    os.makedirs(out, exist_ok=True)
    toml = []
    for n, (typ, f, txt) in enumerate(docs, 1):
        did = f"{SRC}-{n}"
        with open(os.path.join(out, did + ".txt"), "w", encoding="utf-8") as fh:
            fh.write(txt)
        toml += ["[[doc]]", f'id = "{did}"', f'type = "{typ}"', f'file = "{did}.txt"',
                 f"origin = {json.dumps(f)}", ""]
    with open(os.path.join(out, "docs.toml"), "w", encoding="utf-8") as fh:
        fh.write("\n".join(toml))
    print(len(docs), "documents")


def render_obs(idx, o):
    out = []
    perf = v(o, "performer/display")
    if perf:
        out.append(perf.upper())
    out.append(f"LABORATORY RESULT: {cc_text(find(o, 'code'))}")
    out.append("=" * W)
    out += patient_lines(idx, o)
    eff = v(o, "effectiveDateTime")
    if eff:
        out.append(f"Collected: {fmt_date(eff)}   Issued: {fmt_date(v(o, 'issued'))}")
    out.append("=" * W)
    out.append(f"{'Test':<42} {'Result':>16} {'Units':<12} {'Reference':<14} Flag")
    out.append("-" * W)
    out += result_rows(idx, o, o, 0, set())
    out.append("-" * W)
    return "\n".join(x.rstrip() for x in out) + "\n"


if __name__ == "__main__":
    main()
