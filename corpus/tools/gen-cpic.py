#!/usr/bin/env python3
"""Lay out CPIC (Clinical Pharmacogenetics Implementation Consortium) example-implementation
tables as printed pharmacogenomic result pages.

Usage: python3 gen-cpic.py <git-dir of cpicpgx/cpic-guidelines> [out-dir]

Source: the spreadsheets under publication/ at commit 333640565a70 (the last commit before the
repository was emptied and moved): the guideline supplements' "Example Implementation of this
Guideline" tables (diplotype / coded genotype-phenotype summary / EHR priority notation /
consultation (interpretation) text) and the "Pre- and Post-test alerts" tables (CDS alert text
per drug and gene result).  CPIC content is CC0-1.0 (see cpicpgx/cpic-data LICENSE.md).

Two kinds of page are produced, all GENOMIC_REPORT:
 A. a pharmacogenetic test result for one example diplotype / phenotype row of an interpretation
    table, with the interpretation text and the post-test CDS texts of the same workbook whose
    trigger names that phenotype;
 B. a short one-page pharmacogenomic result notification for one post-test CDS row of the alert
    workbooks (gene result(s), activity score, drug(s), alert text).
Only a title line and an (empty) patient/specimen header block are added; every other word comes
from the spreadsheets.  Near-duplicate pages (same text with another drug or allele name) are
dropped with difflib.
"""
import difflib
import io
import os
import re
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET
import zipfile

COMMIT = "333640565a702e77bc6eb989478d772129c5591b"
W = 95
NS = {"m": "http://schemas.openxmlformats.org/spreadsheetml/2006/main",
      "r": "http://schemas.openxmlformats.org/officeDocument/2006/relationships"}
GENES = ["CYP2C19", "CYP2D6", "CYP2C9", "CYP3A5", "CYP2B6", "SLCO1B1", "TPMT", "NUDT15", "DPYD",
         "HLA-B", "HLA-A", "RYR1", "CACNA1S", "UGT1A1", "IFNL3", "G6PD", "CFTR", "CYP4F2",
         "VKORC1"]


def git(gd, *args, binary=False):
    r = subprocess.run(["git", "--git-dir", gd] + list(args), capture_output=True, check=True)
    return r.stdout if binary else r.stdout.decode("utf-8")


def read_xlsx(data):
    z = zipfile.ZipFile(io.BytesIO(data))
    ss = []
    if "xl/sharedStrings.xml" in z.namelist():
        for si in ET.fromstring(z.read("xl/sharedStrings.xml")).findall("m:si", NS):
            ss.append("".join(t.text or "" for t in si.iter("{%s}t" % NS["m"])))
    wb = ET.fromstring(z.read("xl/workbook.xml"))
    rels = ET.fromstring(z.read("xl/_rels/workbook.xml.rels"))
    rmap = {r.get("Id"): r.get("Target") for r in rels}
    out = []
    for s in wb.find("m:sheets", NS):
        t = rmap[s.get("{%s}id" % NS["r"])].lstrip("/")
        t = t if t.startswith("xl/") else "xl/" + t
        root = ET.fromstring(z.read(t))
        rows = []
        for row in root.iter("{%s}row" % NS["m"]):
            cells = {}
            for c in row.findall("m:c", NS):
                col = re.match(r"[A-Z]+", c.get("r")).group(0)
                ci = 0
                for ch in col:
                    ci = ci * 26 + ord(ch) - 64
                v = c.find("m:v", NS)
                typ = c.get("t")
                if typ == "s" and v is not None:
                    val = ss[int(v.text)]
                elif typ == "inlineStr":
                    val = "".join(x.text or "" for x in c.iter("{%s}t" % NS["m"]))
                else:
                    val = v.text if v is not None else ""
                cells[ci - 1] = clean(val)
            if cells:
                rows.append([cells.get(i, "") for i in range(max(cells) + 1)])
        out.append((s.get("name"), rows))
    return out


FOOT = re.compile(r"\b(pharmacist|pharmacologist|phenytoin|file|Text|Summary|Result|Notation|"
                  r"Phentoype|Phenotype|Score|Diplotypes|Alerts?|Point)([a-e])\b")


def clean(s):
    s = FOOT.sub(r"\1", s or "")
    s = s.replace("\xa0", " ").replace("\u2013", "-").replace("\u2019", "'")
    s = s.replace("\u201c", '"').replace("\u201d", '"')
    return re.sub(r"[ \t]+", " ", s).strip()


def genes_in(text):
    found = []
    for g in GENES:
        if re.search(r"(?<![A-Z0-9])" + re.escape(g) + r"(?![0-9])", text, re.I):
            found.append(g)
    # avoid CYP2C9 matching inside CYP2C19 etc. (regex above already anchors the end)
    return found


# ------------------------------------------------------------------ phenotype classes
def classes(text):
    t = " " + text.lower() + " "
    out = set()
    pairs = [("ultrarapid", "UM"), (" um", "UM"), ("rapid metab", "RM"), (" rm", "RM"),
             ("normal metab", "NM"), (" nm", "NM"), ("extensive", "NM"), (" em", "NM"),
             ("intermediate", "IM"), (" im", "IM"), ("poor", "PM"), (" pm", "PM"),
             ("low function", "LF"), ("intermediate function", "IF"),
             ("increased function", "INC"), ("positive", "POS"), ("negative", "NEG")]
    for k, v in pairs:
        if k in t.replace(",", " ").replace("/", " "):
            out.add(v)
    if "ultrarapid" in t and "RM" in out and "rapid metab" not in t.replace("ultrarapid", ""):
        out.discard("RM")
    if "IF" in out:
        out.discard("IM")
    if ("possible" in t or "likely" in t):
        out = {"~" + x for x in out} | out
    return out


# ------------------------------------------------------------------ alert tables
def parse_alerts(sheet_rows, fname):
    recs = []
    hi = None
    for i, r in enumerate(sheet_rows):
        if any(re.search(r"CDS Alert Text", c, re.I) for c in r):
            hi = i
            break
    if hi is None:
        return recs
    hdr = sheet_rows[hi]
    alert_cols = [(j, c) for j, c in enumerate(hdr) if re.search(r"CDS Alert Text", c, re.I)]
    ctx_col = next((j for j, c in enumerate(hdr) if "context" in c.lower()), None)
    drug_col = next((j for j, c in enumerate(hdr) if c.lower().startswith("drug")), None)
    act_cols = [j for j, c in enumerate(hdr) if "activity" in c.lower()]
    trig_cols = [j for j, c in enumerate(hdr) if re.search(r"trigger|phenotype|allele", c, re.I)
                 and j not in act_cols and j != drug_col]
    section = ""
    last_trig = {}
    prev = None
    for r in sheet_rows[hi + 1:]:
        r = r + [""] * (len(hdr) - len(r))
        nonempty = [c for c in r if c]
        if not nonempty:
            continue
        if len(nonempty) == 1 and r[0] and (len(r[0]) > 45 or re.match(r"^[a-e][A-Z\"]", r[0])
                                          or r[0].lower().startswith(("nm:", "note"))):
            continue  # footnote
        if len(nonempty) == 1 and r[0] and " and " in r[0] and genes_in(r[0]):
            section = r[0]
            last_trig = {}
            continue
        texts = {}
        for j, lab in alert_cols:
            if j < len(r) and r[j]:
                texts[lab] = r[j]
        ctx = r[ctx_col] if ctx_col is not None else ""
        trig_vals = [r[j] for j in trig_cols]
        if not ctx and not any(trig_vals) and texts and prev is not None:
            for lab, t in texts.items():
                prev["texts"][lab] = (prev["texts"].get(lab, "") + "\n" + t).strip()
            continue
        if not texts:
            continue
        trig = []
        for j in trig_cols:
            if r[j]:
                last_trig[j] = r[j]
                # a new first trigger resets the later ones
                for k in trig_cols:
                    if k > j and not r[k]:
                        last_trig.pop(k, None)
            if j in last_trig:
                trig.append(last_trig[j])
        rec = {"file": fname, "section": section, "context": ctx,
               "drug": r[drug_col] if drug_col is not None else "",
               "activity": "; ".join(r[j] for j in act_cols if r[j] and r[j] != "n/a"),
               "trig": trig, "texts": texts}
        recs.append(rec)
        prev = rec
    return recs


def drug_of(rec):
    if rec["drug"]:
        return rec["drug"].strip()
    m = re.search(r" and ([a-zA-Z-]+)", rec["section"])
    if m:
        return m.group(1)
    for t in rec["trig"]:
        m = re.search(r"and ([a-z][a-z-]+) ordered", t)
        if m:
            return m.group(1)
    # fall back on the workbook's drug name, else the guideline folder name
    m = re.match(r"([A-Za-z]+)_Pre_and_Post", os.path.basename(rec["file"]))
    if m and m.group(1).lower() not in ("thiopurines", "fluoropyrimidines", "cbz"):
        return m.group(1).lower()
    return rec["file"].split("/")[1].lower()


def alert_label(lab, drug):
    m = re.search(r"\(([^)]+)\)", lab)
    if m:
        return m.group(1)
    m = re.search(r"text\w?\s+(pediatrics|adults)", lab, re.I)
    if m:
        return drug + " (" + m.group(1) + ")"
    return drug


# ------------------------------------------------------------------ text helpers
def wrap(s, indent=0):
    out = []
    for para in str(s).split("\n"):
        out.extend(textwrap.wrap(para, W - indent, break_on_hyphens=False) or [""])
    return [" " * indent + l for l in out]


def header_block(title, gene_line):
    return [title,
            "-" * W,
            "Patient name: ______________________   DOB: ___________   MRN: ______________",
            "Ordering clinician: ________________   Specimen: ______________   Collected: __________",
            gene_line,
            "-" * W]


def is_real(t):
    return t and t.strip().lower() not in ("no cds", "n/a", "na", "none")


# ------------------------------------------------------------------ interpretation tables
def interp_rows(book):
    """Rows of 'Example Implementation' tables holding a consultation text column."""
    out = []
    for name, rows in book:
        hi = None
        for i, r in enumerate(rows):
            if any(re.search(r"Consultation \(Interpretation\) Text", c) for c in r):
                hi = i
                hdr = r
                tc = next(j for j, c in enumerate(r) if "Consultation" in c)
                sc = next((j for j, c in enumerate(r) if "Summary" in c), None)
                pc = next((j for j, c in enumerate(r) if "Priority" in c), None)
                rc = next((j for j, c in enumerate(r) if j != tc and re.search(
                    r"Test Result|Allele definition|Activity Score", c)), None)
                ac = next((j for j, c in enumerate(r) if "Activity" in c and j != rc), None)
                for rr in rows[i + 1:]:
                    rr = rr + [""] * (len(hdr) - len(rr))
                    if not rr[tc] or len([c for c in rr if c]) < 2:
                        if rr and rr[0] and len([c for c in rr if c]) == 1:
                            break
                        continue
                    out.append({"sheet": name, "hdr": hdr, "result_label": hdr[rc] if rc is not None
                                else "", "result": rr[rc] if rc is not None else "",
                                "activity": rr[ac] if ac is not None else "",
                                "summary": rr[sc] if sc is not None else "",
                                "priority": rr[pc] if pc is not None else "", "text": rr[tc]})
    return out


def label_clean(s):
    return s.strip()


def main():
    gd = sys.argv[1]
    outdir = sys.argv[2] if len(sys.argv) > 2 else "corpus/sources/gen-cpic"
    paths = [p for p in git(gd, "ls-tree", "-r", "--name-only", COMMIT, "publication").splitlines()
             if p.endswith(".xlsx")]
    books = {}
    for p in paths:
        try:
            books[p] = read_xlsx(git(gd, "show", COMMIT + ":" + p, binary=True))
        except Exception:
            continue
    alerts = []
    for p, book in books.items():
        for name, rows in book:
            for rec in parse_alerts(rows, p):
                rec["sheet"] = name
                if not rec["drug"] and "(CBZ)" in name:
                    rec["drug"] = "carbamazepine"
                if not rec["drug"] and "(OXC)" in name:
                    rec["drug"] = "oxcarbazepine"
                alerts.append(rec)
    docs = []
    kept_texts = []

    def near_dup(text, thr=0.86):
        norm = re.sub(r"\s+", " ", text.lower())
        for k in kept_texts:
            if difflib.SequenceMatcher(None, norm, k, autojunk=False).quick_ratio() > thr and \
                    difflib.SequenceMatcher(None, norm, k, autojunk=False).ratio() > thr:
                return True
        kept_texts.append(norm)
        return False

    used_in_a = set()
    # ---------------- A: interpretation-table pages
    for p, book in sorted(books.items()):
        rows = interp_rows(book)
        if not rows:
            continue
        for row in rows:
            gene = (genes_in(row["summary"] + " " + label_clean(row["result_label"]) + " " +
                             row["text"]) or genes_in(p) or [""])[0]
            if not gene:
                continue
            phen = row["summary"] if row["summary"].lower() not in ("none", "") else ""
            cls = classes(row["summary"] + " " + row["text"][:400])
            lines = header_block("PHARMACOGENETIC TEST RESULT - " + gene,
                                 "Gene tested: " + gene)
            lines.append("")
            lines.append("RESULT")
            rl = label_clean(row["result_label"]) or "Test result"
            if row["result"]:
                lines += wrap("%s: %s" % (rl, row["result"]), 2)
            if row["activity"]:
                lines.append("  Activity score: " + row["activity"])
            lines += wrap("Coded genotype/phenotype summary: " + (row["summary"] or "None"), 2)
            if row["priority"]:
                lines.append("  EHR priority result notation: " + row["priority"])
            lines += ["", "INTERPRETATION"] + wrap(row["text"], 2)
            meds = []
            for a in alerts:
                if a["file"] != p or "post" not in a["context"].lower():
                    continue
                trig = " ".join(a["trig"]) + " " + a["section"]
                if gene not in genes_in(trig + " " + " ".join(a["texts"].values())):
                    continue
                acls = classes(" ".join(a["trig"]))
                want = {c for c in cls if not c.startswith("~")}
                if not want or not (want & acls):
                    continue
                if ("~" + next(iter(want))) in acls and not any(c.startswith("~") for c in cls):
                    continue
                for lab, t in a["texts"].items():
                    meds.append((alert_label(lab, drug_of(a)), " ".join(a["trig"]), t))
            if meds:
                lines += ["", "MEDICATION-SPECIFIC GUIDANCE (post-test clinical decision support)"]
                seen = set()
                for drug, trig, t in meds:
                    if (drug, t) in seen:
                        continue
                    seen.add((drug, t))
                    lines.append("  " + drug.upper() + "  [" + trig + "]")
                    lines += wrap(t, 4)
            body = "\n".join(lines)
            if near_dup(row["text"] + " ".join(m[2] for m in meds)):
                continue
            docs.append(("PHARMACOGENETIC TEST RESULT - " + gene, lines,
                         p + " (sheet: " + row["sheet"] + ")"))
            used_in_a.update(m[2] for m in meds)

    # ---------------- B: post-test notification pages
    per_file = {}
    for a in alerts:
        if "post" not in a["context"].lower():
            continue
        texts = {k: v for k, v in a["texts"].items() if is_real(v)}
        if not texts or all(v in used_in_a for v in texts.values()):
            continue
        if per_file.get(a["file"], 0) >= 5:
            continue
        drug = drug_of(a)
        glist = genes_in(" ".join(a["trig"]) + " " + a["section"] + " " +
                         " ".join(texts.values()))
        if not glist:
            continue
        joined = " ".join(texts.values())
        if near_dup(joined, 0.8):
            continue
        per_file[a["file"]] = per_file.get(a["file"], 0) + 1
        title = "PHARMACOGENOMIC RESULT NOTIFICATION"
        lines = header_block(title, "Gene(s): " + ", ".join(glist))
        lines += ["", "GENOTYPE-BASED RESULT"]
        for t in a["trig"]:
            lines += wrap(t, 2)
        if a["activity"]:
            lines.append("  Activity score: " + a["activity"])
        lines += ["", "Medication ordered: " + drug, "CDS context: " + a["context"], "",
                  "ALERT / RECOMMENDATION"]
        for lab, t in texts.items():
            if len(texts) > 1:
                lines.append("  " + alert_label(lab, drug).upper())
            lines += wrap(t, 4 if len(texts) > 1 else 2)
        docs.append((title, lines, a["file"] + " (sheet: " + a["sheet"] + ")"))

    # final pass: drop pages whose body is too close to a page already kept
    final, bodies = [], []
    for title, lines, origin in docs:
        body = re.sub(r"\s+", " ", " ".join(lines[6:])).lower()
        dup = False
        for b in bodies:
            sm = difflib.SequenceMatcher(None, body, b, autojunk=False)
            if sm.quick_ratio() > 0.72 and sm.ratio() > 0.72:
                dup = True
                break
        if not dup:
            bodies.append(body)
            final.append((title, lines, origin))
    docs = final
    os.makedirs(outdir, exist_ok=True)
    with open(os.path.join(outdir, "docs.toml"), "w", encoding="utf-8") as fh:
        for n, (title, lines, origin) in enumerate(docs, 1):
            did = "gen-cpic-%d" % n
            pages, cur = [], []
            for l in lines:
                if len(cur) >= 52:
                    pages.append(cur)
                    cur = []
                cur.append(l)
            if cur:
                pages.append(cur)
            with open(os.path.join(outdir, did + ".txt"), "w", encoding="utf-8") as f:
                f.write("\n\f\n".join("\n".join(p).rstrip() for p in pages[:4]).rstrip() + "\n")
            fh.write('[[doc]]\nid = "%s"\ntype = "GENOMIC_REPORT"\nfile = "%s.txt"\n'
                     'origin = "%s"\ntitle = "%s"\n\n' % (did, did, origin.replace('"', "'"),
                                                         title))
    print(len(docs), "documents")


if __name__ == "__main__":
    main()
