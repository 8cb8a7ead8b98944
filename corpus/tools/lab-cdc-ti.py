"""Build corpus/sources/lab-cdc-ti from CDCgov/trusted-intermediary.

Usage: python3 lab-cdc-ti.py <path to the fetched git directory> [<output folder>]

Reads the sample HL7 v2 messages under examples/ (`git show HEAD:...`): only the original
messages (not the *_1_/_2_/_3_ translation stages, not the malformed-message tests).
- ORU^R01 result messages are printed as laboratory result reports: performing laboratory,
  patient / next-of-kin / ordering provider blocks, specimen and dates, then for each OBR
  its panel name and an aligned table of the OBX observations (observation, result, units,
  reference range, flag); long text results and NTE comments are printed as wrapped text.
- ORM^O01 / OML^O21 order messages are printed as laboratory test requisitions (patient,
  ordering provider and facility, tests requested, order questions).
HL7 escape sequences are decoded; nothing else is added.  Near-duplicate messages (the
repository holds many variants of the same test message) are dropped.
"""
import difflib
import json
import os
import re
import subprocess
import sys
import textwrap

SRC = "lab-cdc-ti"
W = 92


def git(repo, *args):
    return subprocess.run(["git", "--git-dir", repo, *args], capture_output=True,
                          check=True).stdout


def unesc(s):
    s = s.replace("\\.br\\", "\n").replace("\\R\\", "~").replace("\\F\\", "|")
    s = s.replace("\\S\\", "^").replace("\\T\\", "&").replace("\\E\\", "\\")
    s = re.sub(r"\\[A-Z.][^\\]*\\", "", s)
    return s


def parse(msg):
    segs = []
    for line in re.split(r"[\r\n]+", msg):
        line = line.strip("\ufeff")
        if len(line) < 3 or not re.match(r"^[A-Z][A-Z0-9]{2}\|", line):
            continue
        f = line.split("|")
        if f[0] == "MSH":
            f = ["MSH", "|"] + f[1:]
        segs.append(f)
    return segs


def fld(seg, i):
    return seg[i] if len(seg) > i else ""


def comp(field, i=0):
    c = field.split("~")[0].split("^")
    return c[i] if len(c) > i else ""


def text_of(ce):
    """Display text of a CE/CWE field: the text component, else the code."""
    c = ce.split("~")[0].split("^")
    if len(c) > 1 and c[1]:
        return unesc(c[1])
    if len(c) > 8 and c[8]:
        return unesc(c[8])
    return unesc(c[0])


def name(xpn):
    c = xpn.split("~")[0].split("^")
    if len(c) > 1 and (c[0] or c[1]):
        fam, giv = c[0].split("&")[0], c[1]
        mid = c[2] if len(c) > 2 else ""
        out = f"{fam}, {giv}" + (f" {mid}" if mid else "")
        return unesc(out.strip(", "))
    return unesc(c[0]) if c else ""


def xcn(field):
    c = field.split("~")[0].split("^")
    if len(c) > 2 and (c[1] or c[2]):
        parts = [c[5] if len(c) > 5 else "", c[2], c[3] if len(c) > 3 else "", c[1],
                 c[4] if len(c) > 4 else "", c[6] if len(c) > 6 else ""]
        return " ".join(p for p in parts if p).strip()
    return ""


def ts(s):
    m = re.match(r"(\d{4})(\d\d)?(\d\d)?(\d\d)?(\d\d)?", s or "")
    if not m:
        return s or ""
    y, mo, d, h, mi = m.groups()
    out = y
    if mo:
        out = f"{mo}/{d or '??'}/{y}"
    if h and (h, mi) != ("00", "00"):
        out += f" {h}:{mi or '00'}"
    return out


def addr(xad):
    c = xad.split("~")[0].split("^")
    c = [unesc(x) for x in c] + [""] * 6
    line = ", ".join(x for x in [c[0], c[1]] if x)
    city = ", ".join(x for x in [c[2], f"{c[3]} {c[4]}".strip()] if x)
    return ", ".join(x for x in [line, city] if x)


def obx_value(o):
    vt, raw = fld(o, 2), fld(o, 5)
    vals = []
    for rep in raw.split("~"):
        if vt in ("CE", "CWE", "CNE", "CF"):
            v = text_of(rep)
        elif vt == "SN":
            c = rep.split("^")
            v = "".join(c)
        elif vt in ("XAD",):
            v = addr(rep)
        elif vt in ("XPN", "XCN"):
            v = name(rep) if vt == "XPN" else xcn(rep)
        elif vt == "XTN":
            c = rep.split("^") + [""] * 8
            v = f"({c[5]}) {c[6][:3]}-{c[6][3:]}" if c[6] else c[0]
        elif vt in ("DT", "DTM", "TS"):
            v = ts(rep)
        elif vt == "ED":
            v = "[attached document]"
        elif "^" in rep:
            v = text_of(rep)
        else:
            v = unesc(rep)
        if v:
            vals.append(v)
    return "; ".join(vals)


def wrap(text, indent="  "):
    out = []
    for para in text.split("\n"):
        if not para.strip():
            out.append("")
            continue
        out += textwrap.wrap(para.strip(), W - len(indent), initial_indent=indent,
                             subsequent_indent=indent)
    return out


def header(segs):
    pid = next((s for s in segs if s[0] == "PID"), [])
    nk1 = next((s for s in segs if s[0] == "NK1"), [])
    orc = next((s for s in segs if s[0] == "ORC"), [])
    obr = next((s for s in segs if s[0] == "OBR"), [])
    spm = next((s for s in segs if s[0] == "SPM"), [])
    lines = []
    mrn = comp(fld(pid, 3)) or comp(fld(pid, 2))
    sex = comp(fld(pid, 8))
    lines.append(f"Patient name : {name(fld(pid, 5)):<36} MRN: {mrn}")
    lines.append(f"Date of birth: {ts(fld(pid, 7)):<36} Sex: {sex}")
    a = addr(fld(pid, 11))
    if a:
        lines.append(f"Address      : {a}")
    if nk1:
        rel = text_of(fld(nk1, 3))
        lines.append(f"Next of kin  : {name(fld(nk1, 2))}" + (f" ({rel})" if rel else ""))
    prov = xcn(fld(obr, 16)) or xcn(fld(orc, 12))
    if prov:
        lines.append(f"Ordering provider: {prov}")
    fac = text_of(fld(orc, 21)) if fld(orc, 21) else ""
    if fac:
        lines += wrap(f"Ordering facility: {comp(fld(orc, 21))}  {addr(fld(orc, 22))}".rstrip(), "")
    accession = comp(fld(obr, 3)) or comp(fld(orc, 3))
    placer = comp(fld(obr, 2)) or comp(fld(orc, 2))
    ids = []
    if placer:
        ids.append(f"Order no.: {placer}")
    if accession:
        ids.append(f"Lab accession: {accession}")
    if ids:
        lines.append("   ".join(ids))
    if spm:
        lines.append(f"Specimen: {text_of(fld(spm, 4))}"
                     + (f"   Collected: {ts(comp(fld(spm, 17)))}" if fld(spm, 17) else "")
                     + (f"   Received: {ts(fld(spm, 18))}" if fld(spm, 18) else ""))
    elif fld(obr, 7):
        lines.append(f"Collected: {ts(fld(obr, 7))}")
    return lines


def performing_lab(segs):
    for s in segs:
        if s[0] == "OBX" and fld(s, 23):
            return comp(fld(s, 23)), addr(fld(s, 24))
    msh = segs[0]
    return comp(fld(msh, 4)) or comp(fld(msh, 3)), ""


def render_oru(segs):
    lab, laddr = performing_lab(segs)
    out = [lab.upper() if lab else "LABORATORY"]
    if laddr:
        out.append(laddr)
    out.append("")
    out.append("LABORATORY RESULT REPORT")
    out.append("=" * W)
    out += header(segs)
    out.append("=" * W)
    rows_pending = []
    state = {"hdr": False}

    def flush():
        if not rows_pending:
            return
        if not state["hdr"]:
            out.append(f"  {'Observation':<52} {'Result':<14} {'Units':<8} {'Ref range':<9} Flag")
            out.append("  " + "-" * (W - 2))
            state["hdr"] = True
        for r in rows_pending:
            out.extend(r)
        rows_pending.clear()

    # group consecutive OBX segments that repeat the same observation (e.g. a list of
    # conditions tested): one entry, the values joined
    items = []
    for s in segs:
        if s[0] == "OBX" and items and items[-1][0] == "OBX" and \
                text_of(fld(items[-1][1][0], 3)) == text_of(fld(s, 3)):
            items[-1][1].append(s)
        else:
            items.append((s[0], [s]))
    last = None
    for t, group in items:
        s = group[0]
        if t == "OBR":
            flush()
            state["hdr"] = False
            out.append("")
            title = text_of(fld(s, 4))
            st = fld(s, 25)
            out.append(f"{title.upper()}" + (f"   [{'FINAL' if st == 'F' else st}]" if st else ""))
            if fld(s, 22) and ts(fld(s, 22)) != state.get("rep"):
                out.append(f"  Reported: {ts(fld(s, 22))}")
                state["rep"] = ts(fld(s, 22))
        elif t == "OBX":
            label = text_of(fld(s, 3)).strip()
            vals = [obx_value(g).strip() for g in group]
            val = "; ".join(v for v in vals if v)
            units = text_of(fld(s, 6)) if fld(s, 6) else ""
            rr = unesc(fld(s, 7))
            flag = text_of(fld(s, 8)) if fld(s, 8) else ""
            if not val:
                continue
            if "\n" in val or len(val) > 14:
                flush()
                out.extend(wrap(f"{label}:", "  "))
                out.extend(wrap(val, "    "))
            else:
                lab_lines = textwrap.wrap(label, 52) or [""]
                r = [f"  {x}" for x in lab_lines[:-1]]
                r.append(f"  {lab_lines[-1]:<52} {val:<14} {units[:8]:<8} {rr[:9]:<9} {flag}"
                         .rstrip())
                rows_pending.append(r)
        elif t == "NTE":
            flush()
            txt = unesc(fld(s, 3))
            if last != "NTE":
                out.append("  Comment:")
            out.extend(wrap(txt, "    ") if txt.strip() else [""])
        last = t
    flush()
    out.append("")
    out.append("-" * W)
    out.append("END OF REPORT")
    txt = "\n".join(x.rstrip() for x in out) + "\n"
    return re.sub(r"\n{3,}", "\n\n", txt)


def render_order(segs):
    msh = segs[0]
    out = [f"{(comp(fld(msh, 4)) or comp(fld(msh, 3))).upper()}"]
    out.append("")
    out.append("LABORATORY TEST REQUISITION")
    out.append("=" * W)
    out += header(segs)
    out.append("=" * W)
    out.append("")
    out.append("TESTS REQUESTED")
    n = 0
    for s in segs:
        if s[0] == "OBR":
            code = comp(fld(s, 4))
            if text_of(fld(s, 4)).strip():
                n += 1
                out.append(f"  {n}. {text_of(fld(s, 4))}" + (f"  ({code})" if code else ""))
            if fld(s, 13):
                out.extend(wrap(f"Relevant clinical information: {text_of(fld(s, 13))}",
                                "     "))
        elif s[0] == "OBX":
            val = obx_value(s)
            if val:
                out.extend(wrap(f"{text_of(fld(s, 3))}: {val}"
                                + (f" {text_of(fld(s, 6))}" if fld(s, 6) else ""), "     "))
        elif s[0] == "NTE":
            out.extend(wrap(unesc(fld(s, 3)), "     Note: "))
        elif s[0] == "DG1":
            out.append(f"     Diagnosis: {text_of(fld(s, 3))}")
    return "\n".join(x.rstrip() for x in out) + "\n"


def main():
    repo = sys.argv[1]
    out = sys.argv[2] if len(sys.argv) > 2 else os.path.join(
        os.path.dirname(__file__), "..", "sources", SRC)
    files = sorted(f for f in git(repo, "ls-tree", "-r", "--name-only", "-z", "HEAD",
                                  "examples").decode().split("\0") if f.endswith(".hl7"))
    docs = []
    for f in files:
        base = os.path.basename(f)
        if re.search(r"_[123]_", base) or "/Test/Message/" in f or "transformed" in base \
                or "annotated" in base or "ACK" in base or "ADT" in base:
            continue
        if re.search(r"malformed|invalid|Incorrect|Missing", base):
            continue
        segs = parse(git(repo, "show", "HEAD:" + f).decode("utf-8", "replace"))
        if not segs or segs[0][0] != "MSH":
            continue
        mtype = comp(fld(segs[0], 9))
        if mtype == "ORU":
            txt, typ = render_oru(segs), "LAB_REPORT"
            if re.search(r"F5 gene|Mutation", txt):
                typ = "GENOMIC_REPORT"
        elif mtype in ("ORM", "OML"):
            txt, typ = render_order(segs), "ADMINISTRATIVE"
        else:
            continue
        if not 12 <= len(txt.splitlines()) <= 208:
            continue  # too thin, or longer than four printed pages
        body = "\n".join(txt.splitlines()[6:])
        if any(t == typ and difflib.SequenceMatcher(None, body, "\n".join(o.splitlines()[6:]),
                                                    autojunk=False).quick_ratio() > 0.92
               and difflib.SequenceMatcher(None, body, "\n".join(o.splitlines()[6:])).ratio()
               > 0.8 for t, _, o in docs):
            continue
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


if __name__ == "__main__":
    main()
