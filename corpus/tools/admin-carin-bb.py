"""admin-carin-bb: renders CARIN Blue Button IG (HL7/carin-bb, CC0) FSH example EOBs and
Coverage instances as printed Explanation-of-Benefits pages and member ID cards.
usage: python3 admin-carin-bb.py <git-dir of HL7/carin-bb> [out-folder]"""
# ---- minimal FSH instance reader (stdlib) ----
import re, subprocess

def git_show(repo, path):
    return subprocess.run(['git', '--git-dir', repo, 'show', 'HEAD:' + path],
                          capture_output=True, text=True, check=True).stdout

def git_ls(repo):
    return subprocess.run(['git', '--git-dir', repo, 'ls-tree', '-r', '--name-only', 'HEAD'],
                          capture_output=True, text=True, check=True).stdout.split('\n')

class Node(dict):
    """children: key -> list of Node; value in .v"""
    def __init__(self):
        super().__init__(); self.v = None; self.last = {}

SEG = re.compile(r'([^.\[\]]+)((?:\[[^\]]*\])*)')

def _split_path(path):
    out = []
    for m in SEG.finditer(path):
        name, br = m.group(1), m.group(2)
        brs = re.findall(r'\[([^\]]*)\]', br)
        out.append((name, brs))
    return out

def _walk(root, path):
    node = root
    for name, brs in _split_path(path):
        key = name; idx = None
        for b in brs:
            if b == '+' or b == '=' or b.isdigit():
                idx = b
            else:
                key = key + ':' + b
        lst = node.setdefault(key, [])
        if idx == '+':
            i = node.last.get(key, -1) + 1
        elif idx == '=':
            i = node.last.get(key, 0)
        elif idx is None:
            i = 0
        else:
            i = int(idx)
        node.last[key] = i
        while len(lst) <= i:
            lst.append(Node())
        node = lst[i]
    return node

def parse_fsh(text):
    """returns dict name -> (header dict, root Node)"""
    insts = {}
    cur = None; stack = []
    lines = text.split('\n'); k = 0
    while k < len(lines):
        line = lines[k]; k += 1
        s = line.split('//')[0] if not re.search(r'"[^"]*//', line) else line
        if re.match(r'^(Instance|Profile|Extension|ValueSet|CodeSystem|Alias|RuleSet|Logical|Invariant|Mapping|Resource):', line):
            kw, val = line.split(':', 1)
            if kw == 'Instance':
                cur = (dict(Instance=val.strip()), Node()); insts[val.strip()] = cur
            else:
                cur = None
            stack = []; continue
        if cur is None: continue
        m = re.match(r'^(InstanceOf|Title|Description|Usage):\s*(.*)$', line)
        if m:
            cur[0][m.group(1)] = m.group(2).strip().strip('"'); continue
        m = re.match(r'^(\s*)\*\s+(\S+)\s*(?:=\s*(.*))?$', line)
        if not m: continue
        ind = len(m.group(1)); path = m.group(2).rstrip('.'); val = m.group(3)
        if val and val.startswith('"""'):
            buf = [val[3:]]
            while '"""' not in buf[-1] and k < len(lines):
                buf.append(lines[k]); k += 1
            val = '"' + '\n'.join(buf).split('"""')[0] + '"'
        elif val and val.count('"') % 2 == 1:
            buf = [val]
            while k < len(lines) and buf[-1].count('"') % 2 == 1 or (len(buf) > 1 and '\n'.join(buf).count('"') % 2 == 1):
                buf.append(lines[k]); k += 1
                if '\n'.join(buf).count('"') % 2 == 0: break
            val = '\n'.join(buf)
        while stack and stack[-1][0] >= ind:
            stack.pop()
        full = (stack[-1][1] + '.' + path) if stack else path
        # resolve soft indices into concrete ones for nesting
        node = _walk(cur[1], full)
        conc = _concrete(cur[1], full)
        stack.append((ind, conc))
        if val is not None:
            node.v = val.strip()
    return insts

def _concrete(root, path):
    node = root; parts = []
    for name, brs in _split_path(path):
        key = name; sl = ''
        for b in brs:
            if not (b == '+' or b == '=' or b.isdigit()):
                key += ':' + b; sl += '[' + b + ']'
        i = node.last.get(key, 0)
        parts.append(name + sl + '[%d]' % i)
        node = node[key][i]
    return '.'.join(parts)

def get(node, path, default=None):
    """path like 'item.productOrService' -> first match; returns Node"""
    n = node
    for name, brs in _split_path(path):
        key = name; idx = 0
        for b in brs:
            if b.isdigit(): idx = int(b)
            else: key += ':' + b
        lst = n.get(key) if n is not None else None
        if not lst or len(lst) <= idx: return default
        n = lst[idx]
    return n

def all_(node, key):
    return node.get(key, []) if node is not None else []

def val(node, path=None):
    n = get(node, path) if path else node
    return n.v if n is not None else None

def text(v):
    """human text for a raw FSH value"""
    if v is None: return ''
    v = v.strip()
    m = re.match(r'^(Reference|Canonical)\(([^)]*)\)\s*(?:"(.*)")?$', v, re.S)
    if m: return m.group(3) or m.group(2)
    m = re.match(r'^([^"\s]*)#("[^"]*"|\S+)\s*(?:"(.*)")?$', v, re.S)
    if m:
        code = m.group(2).strip('"')
        return (code + ' ' + m.group(3)) if m.group(3) else code
    if v.startswith('"') and v.endswith('"'): return v[1:-1]
    return v

def code(v):
    if v is None: return ''
    m = re.match(r'^([^"\s]*)#("[^"]*"|\S+)', v.strip())
    return m.group(2).strip('"') if m else text(v)

def display(v):
    if v is None: return ''
    m = re.match(r'^[^"\s]*#(?:"[^"]*"|\S+)\s*"(.*)"$', v.strip(), re.S)
    return m.group(1) if m else ''

def ref(v):
    m = re.match(r'^Reference\(([^)]*)\)', (v or '').strip())
    return m.group(1) if m else None

def cc(node, path=None):
    """CodeableConcept: text or code+display"""
    n = get(node, path) if path else node
    if n is None: return ''
    t = val(n, 'text')
    if n.v:
        c, d = code(n.v), display(n.v)
        if d: return f'{c} {d}'
        if t: return f'{c} {text(t)}'
        return c
    cod = get(n, 'coding')
    if cod is not None:
        c = code(val(cod, 'code')) if val(cod, 'code') else ''
        d = text(val(cod, 'display')) if val(cod, 'display') else ''
        if cod.v: c, d = code(cod.v), display(cod.v) or d
        return (c + ' ' + d).strip() or text(t)
    return text(t) if t else ''

def wrap(s, width=93, indent=''):
    import textwrap
    out = []
    for para in str(s).split('\n'):
        out += textwrap.wrap(para, width, initial_indent=indent, subsequent_indent=indent) or ['']
    return out

def paginate(lines, maxl=50):
    pages = []; cur = []
    for l in lines:
        if l == '\f':
            pages.append(cur); cur = []; continue
        cur.append(l)
        if len(cur) >= maxl:
            pages.append(cur); cur = []
    if cur: pages.append(cur)
    pages = [p for p in pages if any(x.strip() for x in p)]
    return '\n\f\n'.join('\n'.join(p).rstrip('\n') for p in pages) + '\n'
# ---- end of FSH reader ----

import sys, os, json

SRC = 'admin-carin-bb'
CAT_LABEL = {
    'submitted': 'Billed', 'eligible': 'Eligible', 'benefit': 'Plan paid', 'deductible': 'Deductible',
    'copay': 'Copay', 'coinsurance': 'Coinsurance', 'noncovered': 'Not covered',
    'memberliability': 'You owe', 'paidtoprovider': 'Paid to prov', 'paidbypatient': 'Patient paid',
    'discount': 'Discount', 'priorpayerpaid': 'Prior payer', 'paidtopatient': 'Paid to you',
    'drugcost': 'Drug cost', 'innetwork': 'In network', 'outofnetwork': 'Out of network',
    'tax': 'Tax', 'copay-amount': 'Copay',
}

def money(v):
    try: return '${:,.2f}'.format(float(v))
    except Exception: return str(v or '')

def fdate(v):
    return text(v).split('T')[0] if v else ''

def person_name(inst):
    h, n = inst
    nm = get(n, 'name')
    if nm is None: return h['Instance']
    given = ' '.join(text(x.v) for x in all_(nm, 'given') if x.v)
    parts = [text(val(nm, 'prefix')) if val(nm, 'prefix') else '', given, text(val(nm, 'family'))]
    return ' '.join(p for p in parts if p)

def org_block(insts, refname):
    if refname not in insts: return [refname] if refname else []
    h, n = insts[refname]
    out = [text(val(n, 'name'))]
    for ad in all_(n, 'address'):
        out += [text(l.v) for l in all_(ad, 'line') if l.v and text(l.v) != out[0]]
        cty = ', '.join(x for x in [text(val(ad, 'city')), text(val(ad, 'state'))] if x)
        if cty: out.append((cty + ' ' + text(val(ad, 'postalCode') or '')).strip())
    for t in all_(n, 'telecom'):
        if t.v is None and val(t, 'value'): out.append('Phone: ' + text(val(t, 'value')))
    return out

def ident(n, key='identifier'):
    for k in n:
        if k.split(':')[0] == key:
            for x in n[k]:
                if val(x, 'value'): return text(val(x, 'value'))
    return ''

def adj_cat(a):
    c = code(val(a, 'category'))
    return c

def render_eob(insts, name):
    h, n = insts[name]
    L = []
    payer_ref = ref(val(n, 'insurer'))
    payer = org_block(insts, payer_ref) if payer_ref in insts else [text(val(n, 'insurer.display')) or text(val(n, 'insurer'))]
    pat_ref = ref(val(n, 'patient'))
    pat = insts.get(pat_ref)
    cov = insts.get(ref(val(n, 'insurance.coverage')) or '')
    left = payer
    right = ['EXPLANATION OF BENEFITS', 'THIS IS NOT A BILL', '']
    if pat:
        pn = pat[1]
        right.append('Member: ' + person_name(pat))
        ad = get(pn, 'address')
        if ad is not None:
            right += [text(l.v) for l in all_(ad, 'line') if l.v]
            right.append(f"{text(val(ad,'city'))}, {text(val(ad,'state'))} {text(val(ad,'postalCode'))}")
        if val(pn, 'birthDate'): right.append('Date of birth: ' + text(val(pn, 'birthDate')))
    if cov:
        cn = cov[1]
        right.append('Member ID: ' + text(val(cn, 'identifier.value')))
        for c in all_(cn, 'class'):
            right.append(f"{code(val(c,'type')).title()}: {text(val(c,'value'))} {text(val(c,'name'))}")
    w = max(len(x) for x in left) + 4
    w = max(w, 40)
    for i in range(max(len(left), len(right))):
        a = left[i] if i < len(left) else ''
        b = right[i] if i < len(right) else ''
        L.append((a.ljust(w) + b).rstrip())
    L += ['', '-' * 93]
    ctype = text(val(n, 'type.text')) or code(val(n, 'type'))
    sub = text(val(n, 'subType.text')) or code(val(n, 'subType'))
    L.append(f"Claim number: {ident(n)}")
    L.append(f"Claim type: {ctype}{' - ' + sub if sub else ''}    Processed: {fdate(val(n,'created'))}"
             f"    Claim status: {code(val(n,'outcome'))}")
    prov_ref = ref(val(n, 'provider'))
    prov = text(val(insts[prov_ref][1], 'name')) if prov_ref in insts and val(insts[prov_ref][1], 'name') else (text(val(n, 'provider.display')) or prov_ref or '')
    npi = ident(insts[prov_ref][1]) if prov_ref in insts else ''
    L.append(f"Provider: {prov}{'  (NPI ' + npi + ')' if npi else ''}")
    if val(n, 'payee.type'):
        L.append('Payee: ' + (display(val(n, 'payee.type')) or code(val(n, 'payee.type')))
                 + (' - ' + text(val(n, 'payee.type.text')) if val(n, 'payee.type.text') else ''))
    bp = get(n, 'billablePeriod')
    if bp is not None:
        L.append(f"Dates of service: {fdate(val(bp,'start'))} to {fdate(val(bp,'end')) or fdate(val(bp,'start'))}")
    for ct in all_(n, 'careTeam'):
        pr = ref(val(ct, 'provider'))
        nm = person_name(insts[pr]) if pr in insts else (pr or '')
        if not nm.strip(): continue
        L.append(f"Care team: {nm} - {display(val(ct,'role')) or code(val(ct,'role'))}")
    # supporting info
    si = []
    for k in n:
        if k.startswith('supportingInfo'):
            for x in n[k]:
                lab = code(val(x, 'category')) or k.split(':')[-1]
                v = (val(x, 'timingDate') or val(x, 'valueString') or val(x, 'timingPeriod.start')
                     or val(x, 'valueQuantity.value') or val(x, 'code') or val(x, 'valueReference') or '')
                if v: si.append(f"{lab}: {text(v) if not val(x,'code') else cc(x,'code')}")
    for k in n:
        if k.startswith('adjudication'):
            for x in n[k]:
                if val(x, 'reason'):
                    si.append(f"{k.split(':')[-1]}: {code(val(x,'reason'))}")
    if si:
        L += ['', 'Claim information'] + wrap('; '.join(si), 91, '  ')
    dx = all_(n, 'diagnosis')
    if dx:
        L += ['', 'Diagnoses']
        for d in dx:
            L.append(f"  {text(val(d,'sequence')):>2}  {cc(d,'diagnosisCodeableConcept'):<28} {display(val(d,'type')) or code(val(d,'type'))}")
    px = all_(n, 'procedure')
    if px:
        L += ['', 'Procedures']
        for d in px:
            L.append(f"  {text(val(d,'sequence')):>2}  {cc(d,'procedureCodeableConcept'):<28} {fdate(val(d,'date'))}  {display(val(d,'type')) or code(val(d,'type'))}")
    items = all_(n, 'item')
    if items:
        L += ['', 'SERVICE DETAIL', '-' * 93]
        for it in items:
            date = fdate(val(it, 'servicedDate') or val(it, 'servicedPeriod.start'))
            svc = cc(it, 'productOrService')
            rev = code(val(it, 'revenue'))
            pos = cc(it, 'locationCodeableConcept')
            head = f"{text(val(it,'sequence')) or '':>3}  {date:<10}  {('Rev ' + rev + '  ') if rev else ''}{svc}"
            L += wrap(head, 93)
            extra = []
            if pos: extra.append('Place of service: ' + pos)
            if val(it, 'quantity.value'): extra.append('Qty: ' + text(val(it, 'quantity.value')))
            if extra: L += wrap('; '.join(extra), 88, '       ')
            amts = []
            for k in it:
                if k.startswith('adjudication'):
                    for a in it[k]:
                        c = adj_cat(a)
                        if val(a, 'amount.value') is not None:
                            amts.append(f"{CAT_LABEL.get(c, c)} {money(text(val(a,'amount.value')))}")
                        elif val(a, 'reason'):
                            amts.append(f"{CAT_LABEL.get(code(val(a,'reason')), code(val(a,'reason')))}")
            if amts: L += wrap('   '.join(amts), 88, '       ')
    tots = []
    for k in n:
        if k.startswith('total'):
            for t in n[k]:
                lab = text(val(t, 'category.text')) if val(t, 'category.text') and len(text(val(t, 'category.text'))) < 40 else (display(val(t, 'category')) or CAT_LABEL.get(adj_cat(t), adj_cat(t)))
                tots.append((lab, money(text(val(t, 'amount.value')))))
    if tots:
        L += ['', 'CLAIM TOTALS']
        for a, b in tots:
            L.append(f"  {a:<40}{b:>14}")
    if get(n, 'payment') is not None:
        p = get(n, 'payment')
        L += ['', f"Payment: {display(val(p,'type')) or code(val(p,'type'))}  {money(text(val(p,'amount.value')))}"
              + (f"   Adjustment: {money(text(val(p,'adjustment.value')))}" if val(p, 'adjustment.value') else '')
              + (f"   Date: {text(val(p,'date'))}" if val(p, 'date') else '')]
    for pn in all_(n, 'processNote'):
        L += wrap('Note: ' + text(val(pn, 'text')), 93)
    return L

def render_card(insts, name):
    h, n = insts[name]
    payer_ref = ref(val(n, 'payor'))
    payer = org_block(insts, payer_ref)
    pat = insts.get(ref(val(n, 'beneficiary')) or '')
    sub = insts.get(ref(val(n, 'subscriber')) or '')
    W = 70
    def box(lines):
        out = ['+' + '-' * (W - 2) + '+']
        for l in lines:
            out.append('| ' + l[:W - 4].ljust(W - 4) + ' |')
        out.append('+' + '-' * (W - 2) + '+')
        return out
    typ = text(val(n, 'type.text')) or code(val(n, 'type')) or 'health plan'
    front = [payer[0] if payer else '', typ.upper(), '']
    front.append('Member: ' + (person_name(pat) if pat else ''))
    front.append('Member ID: ' + text(val(n, 'identifier.value')))
    front.append('Subscriber ID: ' + text(val(n, 'subscriberId')) + '    Dependent: ' + text(val(n, 'dependent')))
    if sub: front.append('Subscriber: ' + person_name(sub) + '   Relationship: ' + (text(val(n, 'relationship.text')) or code(val(n, 'relationship'))))
    for c in all_(n, 'class'):
        front.append(f"{code(val(c,'type')).title()}: {text(val(c,'value'))}  {text(val(c,'name'))}")
    if val(n, 'network'): front.append('Network: ' + text(val(n, 'network')))
    per = get(n, 'period')
    if per is not None: front.append(f"Effective: {fdate(val(per,'start'))}" + (f"   Through: {fdate(val(per,'end'))}" if val(per, 'end') else ''))
    back = ['Members: present this card at time of service.', '']
    back += ['Claims / correspondence:'] + ['  ' + x for x in payer[1:]] if len(payer) > 1 else []
    for k in insts.get(payer_ref, ({}, Node()))[1]:
        if k.startswith('identifier'):
            for x in insts[payer_ref][1][k]:
                if val(x, 'value'): back.append(f"{code(val(x,'type')) or 'ID'}: {text(val(x,'value'))}")
    if len(back) < 4: back += ['', 'Provider services and claims: see plan website.']
    L = ['MEMBER IDENTIFICATION CARD', '', 'FRONT'] + box(front) + ['', 'BACK'] + box(back)
    return L

def main():
    repo = sys.argv[1]; out = sys.argv[2] if len(sys.argv) > 2 else 'corpus/sources/' + SRC
    insts = {}; origin = {}
    for p in git_ls(repo):
        if p.startswith('input/fsh/examples/') and p.endswith('.fsh'):
            got = parse_fsh(git_show(repo, p))
            insts.update(got)
            for k in got: origin[k] = p
    docs = []
    # near-duplicates of a kept example (same text, other identifiers): EOBOutpatient1 ~ EOBInpatient1,
    # Coverage2 ~ Coverage1; the '-nonfinancial' EOBs repeat the financial ones without amounts
    dups = {'EOBOutpatient1', 'Coverage2'}
    names = sorted(k for k in insts if insts[k][0].get('InstanceOf', '').startswith('C4BBExplanationOfBenefit')
                   and 'nonfinancial' not in origin[k].lower() and k not in dups)
    cards = sorted(k for k in insts if insts[k][0].get('InstanceOf') == 'C4BBCoverage' and k not in dups)
    for nm in names:
        docs.append((nm, render_eob(insts, nm)))
    for nm in cards:
        docs.append((nm, render_card(insts, nm)))
    toml = []
    for i, (nm, L) in enumerate(docs, 1):
        did = f'{SRC}-{i}'
        txt = paginate(L)
        open(os.path.join(out, did + '.txt'), 'w').write(txt)
        toml.append(f'[[doc]]\nid = "{did}"\ntype = "ADMINISTRATIVE"\nfile = "{did}.txt"\n'
                    f'origin = "{origin[nm]}"\ntitle = {json.dumps(txt.split(chr(10))[0])}\n')
    open(os.path.join(out, 'docs.toml'), 'w').write('\n'.join(toml))
    print(len(docs), 'docs')

if __name__ == '__main__':
    main()
