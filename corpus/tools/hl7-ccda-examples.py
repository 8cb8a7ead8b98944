"""Build corpus/sources/hl7-ccda-examples from HL7/C-CDA-Examples (CC0-1.0).

Usage: python3 hl7-ccda-examples.py <path-to-fetched-git-dir> [<out-dir>]

Renders the human-readable part of selected C-CDA example files as printed reports:
the document header (title, patient name, birth date, sex, identifiers, author, encounter,
custodian), then every section's <title> and narrative <text> block (paragraphs, lists, and
tables laid out as aligned text columns). Coded entries are not rendered: only the narrative
that a CDA viewer would show. Section-level examples (Notes/, Results/) have no header in the
source; they get a short title line and, for results, the section narrative table.
Plain-text non-XML bodies (base64) are decoded and printed as they are.
Documents longer than four printed pages are cut after the last whole section that fits.
"""
import base64, os, re, subprocess, sys, textwrap
import xml.etree.ElementTree as ET

REPO = sys.argv[1]
OUT = sys.argv[2] if len(sys.argv) > 2 else os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "sources", "hl7-ccda-examples")
SID = "hl7-ccda-examples"
WIDTH = 95

DOCS = [
    ("Documents/Consultation Note/Consultation_Note.xml", "CLINICAL_NOTE", None),
    ("Documents/Discharge Summary/Discharge_Summary.xml", "CLINICAL_NOTE", None),
    ("Documents/History and Physical/History_and_Physical.xml", "CLINICAL_NOTE", None),
    ("Documents/Operative Note/Operative_Note.xml", "CLINICAL_NOTE", None),
    ("Documents/Procedure Note/Procedure_Note.xml", "CLINICAL_NOTE", None),
    ("Documents/Progress Note/Progress_Note.xml", "CLINICAL_NOTE", None),
    ("Documents/Referral Note/Referral_Note.xml", "CLINICAL_NOTE", None),
    ("Documents/Transfer Summary/Transfer_Summary.xml", "CLINICAL_NOTE", None),
    ("Notes/Single Consultation Note/Single Consultation Note(C-CDA R2.1).xml", "CLINICAL_NOTE", "CONSULTATION NOTE"),
    ("Unstructured/CDA with Embedded Text plain/CDA_Embedded_Text_Plain_Surgical_Consult.xml", "CLINICAL_NOTE", None),
    ("Results/Results of Basic Metabolic Panel and Troponin/Basic Metabolic Panel with Troponin(C-CDA2.1).xml", "LAB_REPORT", "LABORATORY RESULTS"),
    ("Results/Result with Multiple Reference Ranges/Lab with Multiple Reference Ranges(C-CDA2.1).xml", "LAB_REPORT", "LABORATORY RESULTS"),
    ("Results/Result COVID Positive/Results of COVID Test Positive Normal(C-CDA2.1).xml", "LAB_REPORT", "LABORATORY RESULTS"),
    ("Results/Result panel with coded values of negative-positive/Result panel with coded values of negative-positive(C-CDA2.1).xml", "LAB_REPORT", "LABORATORY RESULTS"),
    ("Results/Result with an unstructured string as value (urine color)/Result with an unstructured string as value urine color (C-CDA2.1).xml", "LAB_REPORT", "LABORATORY RESULTS"),
    ("Results/Result with greater than a specified value/Result with greater than a specified value(C-CDA2.1).xml", "LAB_REPORT", "LABORATORY RESULTS"),
    ("Results/Result with lab location/Result with lab location(C-CDAR2.1).xml", "LAB_REPORT", "LABORATORY RESULTS"),
    ("Results/Result with non-numeric physical quantity and unit/Result with non-numeric physical quantity and unit(C-CDA2.1).xml", "LAB_REPORT", "LABORATORY RESULTS"),
    ("Results/Results Unit Non-UCUM/Results Unit Non-UCUM(C-CDA2.1).xml", "LAB_REPORT", "LABORATORY RESULTS"),
    ("Results/Results of CO2 Test/Results of CO2 Test Normal(C-CDA2.1).xml", "LAB_REPORT", "LABORATORY RESULTS"),
    ("Results/Results panel with pending component/Results panel with pending component(C-CDA2.1).xml", "LAB_REPORT", "LABORATORY RESULTS"),
    ("Results/Results with less than specific value/Results with less than specific value(C-CDA2.1).xml", "LAB_REPORT", "LABORATORY RESULTS"),
    ("Results/Results with translation unit/Results with translation unit(C-CDA2.1).xml", "LAB_REPORT", "LABORATORY RESULTS"),
]


def show(path):
    return subprocess.run(["git", "--git-dir", REPO, "show", "HEAD:" + path],
                          capture_output=True, check=True).stdout


def strip_ns(root):
    for el in root.iter():
        if isinstance(el.tag, str) and "}" in el.tag:
            el.tag = el.tag.split("}", 1)[1]
        for k in list(el.attrib):
            if "}" in k:
                el.attrib[k.split("}", 1)[1]] = el.attrib.pop(k)
    return root


BR = "\x00"


def norm(s):
    return re.sub(r"\s+", " ", s or "").strip()


def inline(el):
    """Text of an inline element, with <br/> as newline."""
    parts = [el.text or ""]
    for c in el:
        if c.tag == "br":
            parts.append(BR)
        elif c.tag in ("table", "list", "paragraph"):
            parts.append(BR)
        else:
            parts.append(inline(c))
        parts.append(c.tail or "")
    return "".join(parts)


def cell_text(el):
    t = inline(el)
    return " / ".join(x for x in (norm(p) for p in t.split(BR)) if x)


def render_table(tbl):
    rows = []
    cap = tbl.find("caption")
    for sect in ("thead", "tbody", "tfoot", None):
        holders = tbl.findall(sect) if sect else [tbl]
        for h in holders:
            for tr in h.findall("tr"):
                rows.append([cell_text(c) for c in tr if c.tag in ("th", "td")])
    out = []
    if cap is not None and norm(inline(cap)):
        out.append(norm(inline(cap)))
    rows = [r for r in rows if any(r)]
    if not rows:
        return out
    ncol = max(len(r) for r in rows)
    rows = [r + [""] * (ncol - len(r)) for r in rows]
    widths = [max(len(r[i]) for r in rows) for i in range(ncol)]
    total = sum(widths) + 2 * (ncol - 1)
    if total <= WIDTH:
        for j, r in enumerate(rows):
            out.append("  ".join(r[i].ljust(widths[i]) for i in range(ncol)).rstrip())
            if j == 0:
                out.append("  ".join("-" * widths[i] for i in range(ncol)))
    else:
        # too wide: cap column widths and wrap cells
        avail = WIDTH - 2 * (ncol - 1)
        cap_w = [min(w, max(8, avail // ncol)) for w in widths]
        spare = avail - sum(cap_w)
        for i in sorted(range(ncol), key=lambda i: widths[i] - cap_w[i], reverse=True):
            if spare <= 0:
                break
            add = min(spare, widths[i] - cap_w[i])
            cap_w[i] += add
            spare -= add
        for j, r in enumerate(rows):
            cells = [textwrap.wrap(r[i], cap_w[i], break_long_words=True) or [""] for i in range(ncol)]
            for k in range(max(len(c) for c in cells)):
                out.append("  ".join((cells[i][k] if k < len(cells[i]) else "").ljust(cap_w[i])
                                     for i in range(ncol)).rstrip())
            if j == 0:
                out.append("  ".join("-" * cap_w[i] for i in range(ncol)))
    return out


def render_block(el, indent=""):
    """Render narrative block content to lines."""
    out = []
    buf = [el.text or ""]

    def flush():
        t = "".join(buf)
        for p in t.split(BR):
            p = norm(p)
            if p:
                out.extend(textwrap.wrap(p, WIDTH - len(indent), initial_indent="", subsequent_indent="")
                           and [indent + x for x in textwrap.wrap(p, WIDTH - len(indent))])
        buf.clear()

    for c in el:
        if c.tag == "paragraph":
            flush()
            sub = render_block(c, indent)
            out.extend(sub)
            out.append("")
        elif c.tag == "list":
            flush()
            ordered = c.get("listType") == "ordered"
            capt = c.find("caption")
            if capt is not None and norm(inline(capt)):
                out.append(indent + norm(inline(capt)))
            for n, item in enumerate(c.findall("item"), 1):
                mark = "%d. " % n if ordered else "- "
                sub = render_block(item, indent + " " * len(mark))
                sub = [s for s in sub if s.strip()] or [""]
                out.append(indent + mark + sub[0].lstrip())
                out.extend(sub[1:])
            out.append("")
        elif c.tag == "table":
            flush()
            out.extend(indent + x for x in render_table(c))
            out.append("")
        elif c.tag == "br":
            buf.append(BR)
        elif c.tag == "caption":
            flush()
            out.append(indent + norm(inline(c)))
        elif c.tag == "renderMultiMedia":
            pass
        else:
            # inline element (content, linkHtml, sub, sup, footnote) possibly with nested blocks
            if c.find(".//paragraph") is not None or c.find(".//table") is not None or c.find(".//list") is not None:
                flush()
                out.extend(render_block(c, indent))
            else:
                buf.append(inline(c))
        buf.append(c.tail or "")
    flush()
    return out


def name_of(el):
    if el is None:
        return ""
    parts = []
    for c in el:
        if c.tag in ("prefix", "given", "family", "suffix") and norm(c.text):
            parts.append(norm(c.text))
    return " ".join(parts) or norm(el.text)


def fmt_date(v):
    if not v:
        return ""
    m = re.match(r"(\d{4})(\d{2})?(\d{2})?(\d{2})?(\d{2})?", v)
    y, mo, d, hh, mi = m.groups()
    s = "/".join(x for x in (mo, d) if x)
    s = (s + "/" + y) if s else y
    if hh:
        s += " %s:%s" % (hh, mi or "00")
    return s


def header(doc):
    out = []
    title = norm(doc.findtext("title")) or "CLINICAL DOCUMENT"
    out.append(title.upper())
    cust = doc.find("custodian/assignedCustodian/representedCustodianOrganization/name")
    if cust is not None and norm(cust.text):
        out.append(norm(cust.text))
    out.append("=" * min(WIDTH, max(40, len(title))))
    pr = doc.find("recordTarget/patientRole")
    if pr is not None:
        p = pr.find("patient")
        nm = name_of(p.find("name")) if p is not None else ""
        dob = fmt_date(p.find("birthTime").get("value")) if p is not None and p.find("birthTime") is not None else ""
        g = p.find("administrativeGenderCode") if p is not None else None
        sex = (g.get("displayName") or {"F": "Female", "M": "Male"}.get(g.get("code"), g.get("code") or "")) if g is not None else ""
        ids = [i.get("extension") for i in pr.findall("id") if i.get("extension")]
        out.append("Patient: %-35s DOB: %-12s Sex: %s" % (nm, dob, sex))
        if ids:
            out.append("MRN: %s" % ids[0])
        ad = pr.find("addr")
        if ad is not None:
            a = ", ".join(norm(x.text) for x in ad if norm(x.text) and x.tag in ("streetAddressLine", "city", "state", "postalCode"))
            if a:
                out.append("Address: %s" % a)
    eff = doc.find("effectiveTime")
    if eff is not None:
        out.append("Date: %s" % fmt_date(eff.get("value")))
    au = doc.find("author/assignedAuthor")
    if au is not None:
        nm = name_of(au.find("assignedPerson/name"))
        org = norm(au.findtext("representedOrganization/name"))
        if nm:
            out.append("Author: %s%s" % (nm, (", " + org) if org else ""))
    enc = doc.find("componentOf/encompassingEncounter")
    if enc is not None:
        lo = enc.find("effectiveTime/low")
        hi = enc.find("effectiveTime/high")
        loc = norm(enc.findtext("location/healthCareFacility/location/name")) or \
            norm(enc.findtext("location/healthCareFacility/serviceProviderOrganization/name"))
        s = "Encounter:"
        if lo is not None:
            s += " %s" % fmt_date(lo.get("value"))
        if hi is not None and hi.get("value"):
            s += " - %s" % fmt_date(hi.get("value"))
        if loc:
            s += "  (%s)" % loc
        if s != "Encounter:":
            out.append(s)
    out.append("")
    return out


def sections(el, level=0):
    out = []
    for comp in el.findall("component"):
        sec = comp.find("section")
        if sec is None:
            continue
        out.extend(section(sec, level))
    return out


def section(sec, level=0):
    out = []
    t = norm(sec.findtext("title"))
    if t:
        out.append(t.upper() if level == 0 else t)
        if level == 0:
            out.append("-" * min(len(t), WIDTH))
    tx = sec.find("text")
    if tx is not None:
        out.extend(render_block(tx))
    out.append("")
    out.extend(sections(sec, level + 1))
    return out


def signature(doc):
    la = doc.find("legalAuthenticator")
    if la is None:
        return []
    nm = name_of(la.find("assignedEntity/assignedPerson/name"))
    tm = la.find("time")
    if not nm:
        return []
    return ["", "Electronically signed by: %s%s" % (nm, ("  " + fmt_date(tm.get("value"))) if tm is not None else "")]


def squeeze(lines):
    res = []
    for l in lines:
        l = l.rstrip()
        if l == "" and (not res or res[-1] == ""):
            continue
        res.append(l)
    while res and res[-1] == "":
        res.pop()
    return res


def wrap_all(lines):
    out = []
    for l in lines:
        if len(l) <= WIDTH:
            out.append(l)
        else:
            ind = len(l) - len(l.lstrip())
            out.extend(textwrap.wrap(l, WIDTH, subsequent_indent=" " * ind, break_on_hyphens=False))
    return out


def render(path, title):
    raw = show(path).decode("utf-8")
    raw = re.sub(r'\s+xmlns(:\w+)?="[^"]*"', "", raw)
    raw = re.sub(r"<(/?)[A-Za-z_][\w.-]*:", r"<\1", raw)
    raw = re.sub(r'(\s)[A-Za-z_][\w.-]*:([\w.-]+=)', r"\1\2", raw)
    root = strip_ns(ET.fromstring(raw.encode("utf-8")))
    if root.tag == "ClinicalDocument":
        lines = header(root)
        nx = root.find("component/nonXMLBody/text")
        if nx is not None:
            raw = base64.b64decode(nx.text.strip()).decode("utf-8", "replace") if nx.get("representation") == "B64" else nx.text
            lines += raw.replace("\r", "").splitlines()
        else:
            lines += sections(root.find("component/structuredBody"))
        lines += signature(root)
    elif root.tag == "section":
        lines = [title, "=" * len(title), ""] + section(root)
    else:
        sec = root.find(".//section")
        lines = [title, "=" * len(title), ""] + section(sec)
    return squeeze(wrap_all(lines))


def main():
    out = []
    for path, typ, title in DOCS:
        lines = render(path, title)
        n = len(out) + 1
        did = "%s-%d" % (SID, n)
        # paginate at section boundaries when long
        pages, cur = [], []
        for l in lines:
            cur.append(l)
        text = "\n".join(lines)
        if len(lines) > 52:
            text = paginate(lines)
            while text.count("\f") > 3:
                # over four pages: drop the last section (heading + its narrative)
                heads = [i for i in range(len(lines) - 1) if re.fullmatch(r"-{3,}", lines[i + 1]) and lines[i]
                         and not lines[i].startswith("-") and (i == 0 or lines[i - 1] == "")]
                lines = lines[:heads[-1]]
                while lines and lines[-1] == "":
                    lines.pop()
                text = paginate(lines)
        with open(os.path.join(OUT, did + ".txt"), "w", encoding="utf-8") as f:
            f.write(text + "\n")
        out.append((did, typ, path, lines[0], len(lines)))
    with open(os.path.join(OUT, "docs.toml"), "w", encoding="utf-8") as f:
        for did, typ, origin, title, _ in out:
            f.write('[[doc]]\nid = "%s"\ntype = "%s"\nfile = "%s.txt"\norigin = "%s"\ntitle = "%s"\n\n'
                    % (did, typ, did, origin, title.replace('"', '\\"')))
    for d in out:
        print(d)


def paginate(lines, size=52):
    """Break pages before a section heading (line followed by dashes) when the page is full."""
    pages, cur = [], []
    i = 0
    while i < len(lines):
        l = lines[i]
        is_head = i + 1 < len(lines) and re.fullmatch(r"-{3,}", lines[i + 1] or "") and l and not l.startswith("-")
        if is_head and len(cur) > size - 8:
            pages.append(cur)
            cur = []
        if len(cur) >= size:
            pages.append(cur)
            cur = []
        if not cur and l == "":
            i += 1
            continue
        cur.append(l)
        i += 1
    if cur:
        pages.append(cur)
    return "\n\f\n".join("\n".join(p).rstrip() for p in pages)


main()
