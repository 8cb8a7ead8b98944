"""Build corpus/sources/lab-synthea-smart from smart-on-fhir/generated-sample-data.

Usage: python3 lab-synthea-smart.py <path to the fetched git directory> [<output folder>]

Reads the Synthea-generated R4 patient bundles under R4/SYNTHEA/ (`git show HEAD:...`).
For each patient the encounter with the most laboratory Observations is taken (at least 6),
and printed as a clinical laboratory report: the performing organisation (encounter
serviceProvider) as letterhead, the patient block (name, birth date, sex, MRN, address),
the ordering clinician (encounter participant), the visit type, collection/report times, then
one aligned results table per DiagnosticReport panel (panel name as heading; test name,
result, units, LOINC code) and the encounter's other laboratory Observations under "Other
tests".  Numbers are rounded for print; no reference ranges are added (Synthea has none).
"""
import json
import os
import re
import subprocess
import sys

SRC = "lab-synthea-smart"
MAX_DOCS = 28


def git(repo, *args):
    return subprocess.run(["git", "--git-dir", repo, *args], capture_output=True,
                          check=True).stdout


def fmt_date(s, time=True):
    m = re.match(r"(\d{4})-(\d\d)-(\d\d)(?:T(\d\d):(\d\d))?", s or "")
    if not m:
        return s or ""
    d = f"{m.group(2)}/{m.group(3)}/{m.group(1)}"
    if time and m.group(4):
        d += f" {m.group(4)}:{m.group(5)}"
    return d


def num(v):
    if isinstance(v, (int, float)):
        if float(v).is_integer():
            return str(int(v))
        if abs(v) >= 100:
            return f"{v:.0f}"
        if abs(v) >= 10:
            return f"{v:.1f}"
        return f"{v:.2f}"
    return str(v)


def value(o):
    if "valueQuantity" in o:
        q = o["valueQuantity"]
        return num(q.get("value")), q.get("unit", "")
    if "valueCodeableConcept" in o:
        c = o["valueCodeableConcept"]
        return c.get("text") or c["coding"][0].get("display", ""), ""
    if "valueString" in o:
        return o["valueString"], ""
    return "", ""


def clean_name(s):
    return re.sub(r"\d+$", "", s)


def row(name, res, unit, code):
    name_lines = []
    while len(name) > 46:
        cut = name.rfind(" ", 0, 46)
        cut = cut if cut > 0 else 46
        name_lines.append(name[:cut])
        name = name[cut:].strip()
    name_lines.append(name)
    out = [f"  {n}" for n in name_lines[:-1]]
    if len(res) > 9:  # a coded finding: print it under the test name
        out.append(f"  {name_lines[-1]:<46} {'':>9}  {unit:<14} {code}".rstrip())
        out.append(f"      {res}")
        return out
    out.append(f"  {name_lines[-1]:<46} {res:>9}  {unit:<14} {code}".rstrip())
    return out


def render(bundle, enc, labs, drs):
    res = {e["fullUrl"]: e["resource"] for e in bundle["entry"]}
    pat = next(r for r in res.values() if r["resourceType"] == "Patient")
    org = res.get(enc.get("serviceProvider", {}).get("reference", ""), {})
    prac = None
    for p in enc.get("participant", []):
        prac = res.get(p.get("individual", {}).get("reference", ""))
    lines = []
    oname = org.get("name", "Clinical Laboratory").strip(" -")
    lines.append(f"{oname.upper()}")
    a = (org.get("address") or [{}])[0]
    if a:
        lines.append(f"{' '.join(a.get('line', []))}, {a.get('city', '')}, "
                     f"{a.get('state', '')} {a.get('postalCode', '')}".strip(", "))
    tel = [t.get("value") for t in org.get("telecom", []) if t.get("value")]
    if tel:
        lines.append(f"Tel: {tel[0]}")
    lines.append("")
    lines.append("CLINICAL LABORATORY REPORT".center(88))
    lines.append("=" * 88)
    nm = next((n for n in pat.get("name", []) if n.get("use") == "official"), pat["name"][0])
    pname = f"{clean_name(nm.get('family', ''))}, {' '.join(clean_name(g) for g in nm.get('given', []))}"
    mrn = next((i["value"] for i in pat.get("identifier", [])
                if (i.get("type", {}).get("coding") or [{}])[0].get("code") == "MR"), "")
    lines.append(f"Patient : {pname:<34} DOB: {fmt_date(pat.get('birthDate'), False):<12}"
                 f" Sex: {pat.get('gender', '')[:1].upper()}")
    lines.append(f"MRN     : {mrn}")
    pa = (pat.get("address") or [{}])[0]
    if pa:
        lines.append(f"Address : {' '.join(pa.get('line', []))}, {pa.get('city', '')}, "
                     f"{pa.get('state', '')} {pa.get('postalCode', '')}")
    if prac:
        pn = prac["name"][0]
        lines.append(f"Ordering clinician: {' '.join(pn.get('prefix', []))} "
                     f"{' '.join(clean_name(g) for g in pn.get('given', []))} "
                     f"{clean_name(pn.get('family', ''))}".replace("  ", " "))
    et = (enc.get("type") or [{}])[0]
    lines.append(f"Visit   : {et.get('text') or (et.get('coding') or [{}])[0].get('display', '')}")
    first = labs[0]
    lines.append(f"Collected: {fmt_date(first.get('effectiveDateTime'))}      "
                 f"Reported: {fmt_date(first.get('issued'))}      Status: FINAL")
    lines.append("=" * 88)
    lines.append(f"  {'TEST':<46} {'RESULT':>9}  {'UNITS':<14} LOINC")
    lines.append("-" * 88)
    used = set()
    for d in drs:
        lines.append("")
        lines.append(d["code"].get("text", "").upper())
        for r in d.get("result", []):
            o = res.get(r["reference"])
            if not o:
                continue
            used.add(r["reference"])
            v, u = value(o)
            lines += row(o["code"].get("text", ""), v, u, o["code"]["coding"][0].get("code", ""))
    rest = [(u, o) for u, o in labs_by_url(res, labs) if u not in used]
    if rest:
        lines.append("")
        lines.append("OTHER TESTS" if drs else "RESULTS")
        for u, o in rest:
            v, un = value(o)
            lines += row(o["code"].get("text", ""), v, un, o["code"]["coding"][0].get("code", ""))
    lines.append("")
    lines.append("-" * 88)
    lines.append("*** END OF REPORT ***".center(88))
    return "\n".join(x.rstrip() for x in lines) + "\n"


def labs_by_url(res, labs):
    ids = {id(o) for o in labs}
    return [(u, o) for u, o in res.items() if id(o) in ids]


def main():
    repo = sys.argv[1]
    out = sys.argv[2] if len(sys.argv) > 2 else os.path.join(
        os.path.dirname(__file__), "..", "sources", SRC)
    files = sorted(f for f in git(repo, "ls-tree", "-r", "--name-only", "-z", "HEAD",
                                  "R4/SYNTHEA").decode().split("\0") if f.endswith(".json"))
    docs = []
    seen_sets = {}
    for f in files:
        try:
            b = json.loads(git(repo, "show", "HEAD:" + f))
        except Exception:
            continue
        if b.get("resourceType") != "Bundle":
            continue
        res = [e["resource"] for e in b["entry"]]
        encs = {}
        for e in b["entry"]:
            r = e["resource"]
            if r["resourceType"] == "Encounter":
                encs[e["fullUrl"]] = r
        labs_by_enc, drs_by_enc = {}, {}
        for r in res:
            if r["resourceType"] == "Observation" and any(
                    c["coding"][0].get("code") == "laboratory" for c in r.get("category", [])):
                labs_by_enc.setdefault(r.get("encounter", {}).get("reference"), []).append(r)
            if r["resourceType"] == "DiagnosticReport":
                drs_by_enc.setdefault(r.get("encounter", {}).get("reference"), []).append(r)
        best = None
        for eu, labs in labs_by_enc.items():
            if eu not in encs or len(labs) < 6:
                continue
            key = tuple(sorted(d["code"].get("text", "") for d in drs_by_enc.get(eu, [])))
            score = (seen_sets.get(key, 0) == 0, len(labs))
            if best is None or score > best[0]:
                best = (score, eu, key)
        if not best:
            continue
        _, eu, key = best
        if seen_sets.get(key, 0) >= 4:
            continue  # enough reports with this same panel set
        seen_sets[key] = seen_sets.get(key, 0) + 1
        txt = render(b, encs[eu], labs_by_enc[eu], drs_by_enc.get(eu, []))
        docs.append((f, txt))
        if len(docs) >= MAX_DOCS:
            break
    os.makedirs(out, exist_ok=True)
    toml = []
    for n, (f, txt) in enumerate(docs, 1):
        did = f"{SRC}-{n}"
        with open(os.path.join(out, did + ".txt"), "w", encoding="utf-8") as fh:
            fh.write(txt)
        toml += ["[[doc]]", f'id = "{did}"', 'type = "LAB_REPORT"', f'file = "{did}.txt"',
                 f"origin = {json.dumps(f)}", ""]
    with open(os.path.join(out, "docs.toml"), "w", encoding="utf-8") as fh:
        fh.write("\n".join(toml))
    print(len(docs), "documents", seen_sets)


if __name__ == "__main__":
    main()
