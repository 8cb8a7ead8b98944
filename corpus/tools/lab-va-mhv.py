"""Build corpus/sources/lab-va-mhv from department-of-veterans-affairs/mhv-fhir-phr-mapping.

Usage: python3 lab-va-mhv.py <path to the fetched git directory> [<output folder>]

Reads the IG's published example resources (docs/*.json at HEAD) with `git show`:
- DiagnosticReport "LR MICROBIOLOGY REPORT" / "LR SURGICAL PATHOLOGY REPORT": the VistA
  report text in presentedForm (base64) is printed as is, under a short header block
  (facility, patient, report title); VistA formatting codes such as |TAB||NOWRAP| are dropped.
- DiagnosticReport Chem-Hem (VA.MHV.PHR.chReport): the contained Observations are printed as
  an aligned results table (test, result, flag, units, reference range) with the specimen,
  collection time, ordering provider, ordering facility and the result comments.
- DocumentReference TIU notes (progress notes, consults, discharge summaries, C&P exams):
  the base64 note text is printed as is.  Empty templates and duplicates are skipped.
"""
import base64
import difflib
import html
import json
import os
import re
import subprocess
import textwrap
import sys
import xml.etree.ElementTree as ET

SRC = "lab-va-mhv"
# near-duplicates the automatic checks miss: a copy of ex-MHV-chReport-1 and a second
# empty discharge-summary template
EXCLUDE = {"docs/DiagnosticReport-ex-MHV-chReport-1-secondary.json",
           "docs/DocumentReference-9ae81286-2f79-4852-a135-4699c69534ec.json"}


def git(repo, *args):
    return subprocess.run(["git", "--git-dir", repo, *args], capture_output=True,
                          text=True, check=True).stdout


def load(repo, path):
    return json.loads(git(repo, "show", "HEAD:" + path))


def wrap(line, width=95):
    out = []
    while len(line) > width:
        cut = line.rfind(" ", 0, width)
        if cut <= 0:
            cut = width
        out.append(line[:cut].rstrip())
        line = "    " + line[cut:].lstrip()
    out.append(line)
    return out


def finish(lines):
    res = []
    for ln in lines:
        res.extend(wrap(ln.rstrip()))
    # collapse runs of blank lines
    txt = re.sub(r"\n{3,}", "\n\n", "\n".join(res)).strip("\n") + "\n"
    return txt


def fmt_dt(s):
    if not s:
        return ""
    m = re.match(r"(\d{4})-(\d\d)-(\d\d)(?:T(\d\d):(\d\d))?", s)
    if not m:
        return s
    mon = ["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV",
           "DEC"][int(m.group(2)) - 1]
    d = f"{mon} {m.group(3)}, {m.group(1)}"
    if m.group(4):
        d += f"@{m.group(4)}:{m.group(5)}"
    return d


def patient_block(repo, ref, patients):
    pid = (ref or "").split("/")[-1]
    p = patients.get(pid)
    if not p:
        return []
    nm = (p.get("name") or [{}])[0]
    name = (nm.get("family", "") + "," + " ".join(nm.get("given", []))).upper().strip(",")
    out = [f"PATIENT: {name}"]
    if p.get("birthDate", "0")[:4] > "1800":
        out[0] += f"   DOB: {fmt_dt(p['birthDate'])}"
    if p.get("gender"):
        out[0] += f"   SEX: {p['gender'].upper()}"
    return out


def clean_vista(text):
    text = html.unescape(text)
    lines = []
    for ln in text.splitlines():
        s = re.sub(r"\|[A-Z]+(\(\d+\))?\|", "", ln)
        if ln.strip() and not s.strip():
            continue
        lines.append(s.rstrip())
    return lines


def org_name(dr):
    for c in dr.get("contained", []):
        if c["resourceType"] == "Organization" and "VAMC" in c.get("name", "").upper():
            return c
    for c in dr.get("contained", []):
        if c["resourceType"] == "Organization":
            return c
    return None


def lab_text_report(dr, patients, repo):
    title = dr["code"].get("text", "LABORATORY REPORT")
    org = org_name(dr)
    lines = [title]
    lines.append("VA MY HEALTHEVET - LABS AND TESTS")
    if org:
        lines.append(f"Facility: {org.get('name')}")
    lines += patient_block(repo, dr.get("subject", {}).get("reference"), patients)
    lines.append(f"Report released: {fmt_dt(dr.get('issued') or dr.get('effectiveDateTime'))}")
    lines.append("-" * 79)
    data = dr["presentedForm"][0]["data"]
    lines += clean_vista(base64.b64decode(data).decode("utf-8", "replace"))
    return finish(lines)


def qty(o):
    if "valueQuantity" in o:
        v = o["valueQuantity"]
        val = v.get("value")
        if isinstance(val, float) and val.is_integer() and "." not in json.dumps(val):
            val = int(val)
        return str(val), v.get("unit", "")
    if "valueString" in o:
        return o["valueString"], ""
    if "valueCodeableConcept" in o:
        return o["valueCodeableConcept"].get("text", ""), ""
    return "", ""


def ch_report(dr, patients, repo):
    cont = {c["id"]: c for c in dr.get("contained", [])}
    obs = [c for c in dr.get("contained", []) if c["resourceType"] == "Observation"]
    specs = [c for c in dr.get("contained", []) if c["resourceType"] == "Specimen"]
    reqs = [c for c in dr.get("contained", []) if c["resourceType"] == "ServiceRequest"]
    prac = [c for c in dr.get("contained", []) if c["resourceType"] == "Practitioner"]
    org = org_name(dr)
    lines = ["CHEMISTRY / HEMATOLOGY RESULTS"]
    if org:
        a = (org.get("address") or [{}])[0]
        lines.append(org.get("name", ""))
        if a:
            lines.append(", ".join([" ".join(a.get("line", [])), a.get("city", ""),
                                    a.get("state", "") + " " + a.get("postalCode", "")]))
    lines.append("")
    lines += patient_block(repo, dr.get("subject", {}).get("reference"), patients)
    spec = specs[0] if specs else {}
    coll = (spec.get("collection") or {}).get("collectedDateTime") or dr.get("effectiveDateTime")
    lines.append(f"Specimen: {spec.get('type', {}).get('text', '')}"
                 f"          Collected: {fmt_dt(coll)}")
    ident = [i.get("value") for i in dr.get("identifier", []) if i.get("value")]
    if ident:
        lines.append(f"Accession/Report No: {ident[0]}")
    if reqs:
        lines.append("Test(s) ordered: " + ", ".join(r["code"].get("text", "") for r in reqs))
    if prac:
        nm = prac[0]["name"][0]
        lines.append(f"Ordering provider: {nm.get('family', '')},{' '.join(nm.get('given', []))}")
    if dr.get("issued"):
        lines.append(f"Reported: {fmt_dt(dr['issued'])}")
    lines.append("")
    hdr = f"{'Test name':<34} {'Result':>10} {'Flag':<5} {'Units':<12} {'Ref Range':<16}"
    lines.append(hdr)
    lines.append("-" * len(hdr))
    notes = []
    for o in obs:
        val, unit = qty(o)
        flag = ""
        for it in o.get("interpretation", []):
            flag = it.get("text") or (it.get("coding") or [{}])[0].get("code", "")
        rr = ""
        if o.get("referenceRange"):
            r = o["referenceRange"][0]
            rr = r.get("text") or "-".join(str(r.get(k, {}).get("value", ""))
                                           for k in ("low", "high"))
        name = o["code"].get("text", "")
        lines.append(f"{name[:34]:<34} {val:>10} {flag:<5} {unit:<12} {rr:<16}".rstrip())
        for n in o.get("note", []):
            notes.append(f"{name}: {n.get('text', '')}")
    if notes:
        lines.append("")
        lines.append("Comments:")
        for n in notes:
            lines += ["  " + x for x in n.splitlines()]
    perf = [c for c in dr.get("contained", []) if c["resourceType"] == "Organization"
            and c is not org]
    if perf:
        lines.append("")
        lines.append(f"Performing laboratory: {perf[0].get('name', '')}")
    return finish(lines)


def note_text(doc):
    att = doc["content"][0]["attachment"]
    txt = base64.b64decode(att["data"]).decode("utf-8", "replace")
    return finish(clean_vista(txt))


def _t(e):
    return e.tag.split("}")[-1]


def _kid(e, *names):
    for n in names:
        if e is None:
            return None
        e = next((c for c in e if _t(c) == n), None)
    return e


def _txt(e, *names):
    e = _kid(e, *names)
    return (e.text or "").strip() if e is not None else ""


def hdr_date(lit):
    m = re.match(r"(\d{4})(\d\d)(\d\d)(\d\d)?(\d\d)?", lit or "")
    if not m:
        return lit or ""
    mon = ["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV",
           "DEC"][int(m.group(2)) - 1]
    out = f"{mon} {m.group(3)}, {m.group(1)}"
    if m.group(4):
        out += f"@{m.group(4)}:{m.group(5) or '00'}"
    return out


def hdr_reports(repo):
    """Chem/hem lab reports from the HDR 'MHVLabRead40011' mock (mocks/cds-service.xml)."""
    raw = git(repo, "show", "HEAD:mocks/cds-service.xml").lstrip()
    root = ET.fromstring(raw)
    out = []
    for p in (e for e in root.iter() if _t(e) == "labTestPromises"):
        results = [(lt, r) for lt in p if _t(lt) == "labTests"
                   for r in lt if _t(r) == "chemistryResults"]
        if len(results) < 3:
            continue
        pat = _kid(p, "patient", "name")
        pname = f"{_txt(pat, 'family')},{_txt(pat, 'given')} {_txt(pat, 'middle')}".strip()
        req = _kid(p, "labTestRequest")
        au = _kid(req, "author", "name")
        fac = _txt(req, "orderingFacilityIdentifier", "name")
        spec = _kid(p, "specimen")
        lines = ["LAB RESULTS - CHEMISTRY/HEMATOLOGY", fac, ""]
        lines.append(f"PATIENT: {pname}")
        lines.append(f"Specimen: {_txt(spec, 'specimenSource', 'originalText') or _txt(spec, 'specimenSource', 'displayText')}"
                     f"    Collected: {hdr_date(_txt(spec, 'specimenTakenDate', 'literal'))}")
        lines.append(f"Report completed: {hdr_date(_txt(p, 'reportCompleteDate', 'literal'))}")
        if au is not None:
            lines.append(f"Ordering provider: {_txt(au, 'family')},{_txt(au, 'given')} "
                         f"{_txt(au, 'title')}".rstrip())
        rid = _txt(p, "recordIdentifier", "identity")
        if rid:
            lines.append(f"Accession: {rid}")
        ordered = []
        for lt in p:
            if _t(lt) == "labTests":
                name = _txt(lt, "orderedTestCode", "displayText")
                if name and name not in ordered:
                    ordered.append(name)
        if ordered:
            lines += textwrap.wrap("Tests ordered: " + ", ".join(ordered), 92,
                                   subsequent_indent="    ")
        lines.append("")
        hdr = f"{'Test name':<28} {'Result':>9} {'Flag':<4} {'Units':<14} {'Ref. range':<14}"
        lines.append(hdr)
        lines.append("=" * len(hdr))
        comments, labs = [], []
        for lt, r in results:
            name = _txt(r, "testIdentifier", "originalText") or \
                _txt(r, "testIdentifier", "displayText")
            val = _txt(r, "observationValue")
            unit = _txt(r, "observationUnits", "displayText")
            rr = html.unescape(_txt(r, "referenceRange"))
            flag = _txt(r, "valueInterpretation", "code")
            lines.append(f"{name[:28]:<28} {val:>9} {flag:<4} {unit[:14]:<14} {rr:<14}".rstrip())
            for c in _kid(r, "labCommentEvents") or []:
                if c.text and c.text.strip():
                    comments.append((name, html.unescape(c.text.strip())))
            org = _kid(r, "performingOrganization")
            if org is not None:
                o = _txt(org, "identifier", "name")
                a = _kid(org, "address")
                ad = ", ".join(x for x in [_txt(a, "line1"), _txt(a, "city"),
                                           f"{_txt(a, 'state')} {_txt(a, 'postalCode')}".strip()]
                               if x)
                clia = _txt(org, "identifier", "identity")
                lab = f"{o}, {ad}" + (f" (CLIA {clia})" if clia else "")
                if lab not in labs:
                    labs.append(lab)
        gen = [c.text.strip() for c in (_kid(p, "labCommentEvents") or []) if c.text]
        if comments or gen:
            lines.append("")
            lines.append("Comments:")
            for g in gen:
                lines += textwrap.wrap(html.unescape(g), 90, initial_indent="  ",
                                       subsequent_indent="  ")
            last = None
            for name, c in comments:
                if name != last:
                    lines.append(f"  {name}:")
                    last = name
                lines += textwrap.wrap(c, 88, initial_indent="    ", subsequent_indent="    ")
        if labs:
            lines.append("")
            for lab in labs:
                lines += textwrap.wrap("Performing laboratory: " + lab, 92,
                                       subsequent_indent="    ")
        key = tuple(sorted(_txt(r, "testIdentifier", "originalText") for _, r in results))
        out.append((key, finish(lines)))
    return out


def main():
    repo = sys.argv[1]
    out = sys.argv[2] if len(sys.argv) > 2 else os.path.join(
        os.path.dirname(__file__), "..", "sources", SRC)
    files = git(repo, "ls-tree", "-r", "--name-only", "HEAD", "docs").split()
    patients = {}
    for f in files:
        m = re.match(r"^docs/Patient-([^.]*)\.json$", f)
        if m:
            patients[m.group(1)] = load(repo, f)
    docs = []
    seen = set()
    single = 0
    for f in sorted(files):
        if not re.match(r"^docs/(DiagnosticReport|DocumentReference)-[^.]*\.json$", f):
            continue
        if f in EXCLUDE:
            continue
        r = load(repo, f)
        typ = None
        if r["resourceType"] == "DiagnosticReport":
            code = r["code"].get("text", "")
            if "MICROBIOLOGY" in code:
                txt, typ = lab_text_report(r, patients, repo), "LAB_REPORT"
            elif "PATHOLOGY" in code:
                txt, typ = lab_text_report(r, patients, repo), "PATHOLOGY_REPORT"
            elif code == "CH":
                nobs = sum(c["resourceType"] == "Observation" for c in r.get("contained", []))
                if nobs < 2:
                    single += 1
                    if single > 6:
                        continue  # enough one-test reports
                txt, typ = ch_report(r, patients, repo), "LAB_REPORT"
            else:
                continue  # radiology / nuclear medicine reports are not in scope here
        else:
            t = (r.get("type") or {}).get("text") or ""
            if not t or "SECURE MESSAGING" in t or "DIALOG" in t or "deleted" in f:
                continue
            txt = note_text(r)
            body = re.sub(r"[^A-Za-z]", "", txt)
            if len(body) < 700:
                continue
            typ = "CLINICAL_NOTE"
        if typ == "CLINICAL_NOTE" and re.search(r"STUB|SPECTACLE", txt.splitlines()[0]):
            continue  # boilerplate stub / spectacle prescription form
        if "CHEMISTRY / HEMATOLOGY" in txt:
            # the same test(s) reported again (other date or facility): a near-duplicate
            key = tuple(ln.split()[0] for ln in txt.split("-" * 20)[-1].splitlines()
                        if ln.strip() and not ln.startswith(("Comments", "Performing", " ")))
            if key in seen:
                continue
            seen.add(key)
        if typ == "CLINICAL_NOTE" and any(
                t == typ and difflib.SequenceMatcher(None, txt, o).ratio() > 0.8
                for t, _, o in docs):
            continue
        docs.append((typ, f, txt))
    seen_hdr = set()
    for key, txt in hdr_reports(repo):
        # the same panel reported again (other date, other values): a near-duplicate
        if key in seen_hdr:
            continue
        seen_hdr.add(key)
        acc = re.search(r"Accession: (\S+)", txt)
        docs.append(("LAB_REPORT", "mocks/cds-service.xml"
                     + (f" (accession {acc.group(1)})" if acc else ""), txt))
    os.makedirs(out, exist_ok=True)
    toml = []
    for n, (typ, f, txt) in enumerate(docs, 1):
        did = f"{SRC}-{n}"
        with open(os.path.join(out, did + ".txt"), "w", encoding="utf-8") as fh:
            fh.write(txt)
        first = txt.splitlines()[0].strip()
        toml.append("[[doc]]")
        toml.append(f'id = "{did}"')
        toml.append(f'type = "{typ}"')
        toml.append(f'file = "{did}.txt"')
        toml.append(f'origin = "{f}"')
        if typ != "CLINICAL_NOTE":
            toml.append(f"title = {json.dumps(first)}")
        toml.append("")
    with open(os.path.join(out, "docs.toml"), "w", encoding="utf-8") as fh:
        fh.write("\n".join(toml))
    print(len(docs), "documents")


if __name__ == "__main__":
    main()
