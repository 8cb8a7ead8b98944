"""admin-au-erequesting: prints the HL7 Australia eRequesting IG examples (hl7au/au-fhir-erequesting,
CC0-1.0, input/examples/*.xml) as the paper documents a practice or a diagnostic provider would hold:
pathology and imaging request forms (one per placer group number, listing the requested tests),
communication requests (copy-to, urgent results, patient preferences), a My Health Record consent
withdrawal form and fulfilment task sheets. Values are the examples' own.
usage: python3 admin-au-erequesting.py <git-dir of hl7au/au-fhir-erequesting> [out-folder]"""
import sys, os, json, subprocess, base64, textwrap
import xml.etree.ElementTree as ET

SRC = 'admin-au-erequesting'
NS = '{http://hl7.org/fhir}'

def git_show(repo, path):
    return subprocess.run(['git', '--git-dir', repo, 'show', 'HEAD:' + path],
                          capture_output=True, text=True, check=True).stdout

def git_ls(repo):
    return subprocess.run(['git', '--git-dir', repo, 'ls-tree', '-r', '--name-only', 'HEAD'],
                          capture_output=True, text=True, check=True).stdout.split('\n')

def conv(el):
    """FHIR XML element -> python value (dict of lists, or value string)"""
    kids = list(el)
    if not kids:
        return el.get('value') if el.get('value') is not None else {'url': el.get('url')} if el.get('url') else ''
    d = {}
    if el.get('url'): d['url'] = el.get('url')
    if el.get('value') is not None: d['value'] = el.get('value')
    for k in kids:
        if not isinstance(k.tag, str): continue
        d.setdefault(k.tag.replace(NS, ''), []).append(conv(k))
    return d

def g(d, path, default=''):
    cur = d
    for p in path.split('.'):
        if isinstance(cur, dict) and p in cur and cur[p]:
            cur = cur[p][0]
        else:
            return default
    return cur

def gl(d, key):
    return d.get(key, []) if isinstance(d, dict) else []

def cc(c):
    if not isinstance(c, dict): return c or ''
    t = g(c, 'text')
    cod = g(c, 'coding')
    disp = g(cod, 'display') if cod else ''
    return t or disp or (g(cod, 'code') if cod else '')

def ext(d, suffix):
    for e in gl(d, 'extension'):
        if isinstance(e, dict) and (e.get('url') or '').endswith(suffix):
            return e
    return None

def ref(d, key):
    r = g(d, key + '.reference')
    return r.split('/')[-1] if r else ''

class Store:
    def __init__(self, repo):
        self.by_id = {}; self.path = {}
        for p in git_ls(repo):
            if p.startswith('input/examples/') and p.endswith('.xml'):
                root = ET.fromstring(git_show(repo, p))
                d = conv(root); d['_type'] = root.tag.replace(NS, '')
                self.by_id[g(d, 'id')] = d; self.path[g(d, 'id')] = p
    def get(self, i): return self.by_id.get(i, {})

def hname(n):
    if not n: return ''
    given = ' '.join(x for x in gl(n, 'given') if isinstance(x, str))
    pre = ' '.join(x for x in gl(n, 'prefix') if isinstance(x, str))
    return ' '.join(x for x in [pre, given, g(n, 'family')] if x)

def address(a):
    if not a: return ''
    lines = [x for x in gl(a, 'line') if isinstance(x, str)]
    return ', '.join(lines + [' '.join(x for x in [g(a, 'city'), g(a, 'state'), g(a, 'postalCode')] if x)])

def ids(d):
    out = []
    for i in gl(d, 'identifier'):
        lab = g(i, 'type.text') or g(i, 'type.coding.display') or g(i, 'type.coding.code')
        out.append((lab, g(i, 'value')))
    return out

def phones(d):
    return ', '.join(f"{g(t,'value')} ({g(t,'use')})" if g(t, 'use') else g(t, 'value') for t in gl(d, 'telecom'))

def person(st, rid):
    d = st.get(rid)
    if d.get('_type') == 'PractitionerRole':
        pr = st.get(ref(d, 'practitioner'))
        org = st.get(ref(d, 'organization'))
        return dict(name=hname(g(pr, 'name')), role=cc(g(d, 'code')), ids=ids(d), phone=phones(d),
                    org=g(org, 'name'), addr=address(g(org, 'address')))
    if d.get('_type') == 'Organization':
        return dict(name=g(d, 'name'), role='', ids=ids(d), phone=phones(d), org='', addr=address(g(d, 'address')))
    if d.get('_type') == 'Patient':
        return dict(name=hname(g(d, 'name')), role='patient', ids=ids(d), phone=phones(d), org='', addr=address(g(d, 'address')))
    return dict(name=rid, role='', ids=[], phone='', org='', addr='')

def patient_block(st, pid, style):
    p = st.get(pid)
    nm = g(p, 'name')
    L = []
    if style == 'box':
        L.append(f"Surname: {g(nm,'family').upper():<28} Given name(s): {' '.join(x for x in gl(nm,'given') if isinstance(x,str))}")
        L.append(f"Date of birth: {g(p,'birthDate'):<22} Sex: {g(p,'gender')}")
        L.append(f"Address: {address(g(p,'address'))}")
        L.append(f"Phone: {phones(p)}")
        for lab, v in ids(p):
            L.append(f"{lab}: {v}")
        ind = ext(p, 'indigenous-status')
        if ind: L.append(f"Indigenous status: {g(ind,'valueCoding.display')}")
    return L

def fmt_person(pp, label):
    L = [f"{label}: {pp['name']}" + (f", {pp['role']}" if pp['role'] else '')]
    for lab, v in pp['ids']: L.append(f"  {lab}: {v}")
    if pp['org']: L.append(f"  {pp['org']}")
    if pp['addr']: L.append(f"  {pp['addr']}")
    if pp['phone']: L.append(f"  Phone/email: {pp['phone']}")
    return L

def wrapl(s, ind='  '):
    return textwrap.wrap(s, 93, subsequent_indent=ind) or ['']

def request_form(st, orders, commreqs):
    first = orders[0]
    cat = cc(g(first, 'category'))
    imaging = 'Imaging' in cat
    L = ['DIAGNOSTIC IMAGING REQUEST' if imaging else 'PATHOLOGY REQUEST', '']
    req = g(first, 'requisition')
    L.append(f"Request (placer group) no.: {g(req,'value')}    Requested by: {g(req,'assigner.display')}")
    L.append(f"Date of request: {g(first,'authoredOn')}")
    L += ['', 'PATIENT', '-' * 60] + patient_block(st, ref(first, 'subject'), 'box')
    cov = ref(first, 'insurance')
    if cov:
        c = st.get(cov)
        L.append(f"Billing: {cc(g(c,'type'))}" + ''.join(f"   {lab} {v}" for lab, v in ids(c)) +
                 (f"   Payor: {g(c,'payor.display')}" if g(c, 'payor.display') else ''))
    L += ['', 'TESTS / EXAMINATIONS REQUESTED', '-' * 60]
    for o in sorted(orders, key=lambda o: int(g(ext(o, 'displaysequence') or {}, 'valueInteger') or 0)):
        code = g(o, 'code')
        line = f"[x] {cc(code)}"
        disp = g(code, 'coding.display')
        if disp and disp != cc(code): line += f"  ({disp})"
        L.append(line)
        det = []
        if g(o, 'priority'): det.append('Priority: ' + g(o, 'priority'))
        if g(o, 'status') and g(o, 'status') != 'active': det.append('Status: ' + g(o, 'status'))
        sr = ext(o, 'request-statusReason')
        if sr: det.append('Status reason: ' + cc(g(sr, 'valueCodeableConcept')))
        fp = ext(o, 'fastingprecondition')
        if fp: det.append('Fasting: ' + cc(g(fp, 'valueCodeableConcept')))
        if g(o, 'occurrenceDateTime'): det.append('Collect: ' + g(o, 'occurrenceDateTime'))
        if g(o, 'occurrencePeriod'): det.append(f"Perform between {g(o,'occurrencePeriod.start')} and {g(o,'occurrencePeriod.end')}")
        if g(o, 'bodySite'): det.append('Body site: ' + cc(g(o, 'bodySite')))
        for rc in gl(o, 'reasonCode'): det.append('Reason: ' + cc(rc))
        sp = ext(o, 'sexParameterForClinicalUse')
        if sp:
            v = ext(sp, 'value'); cm = ext(sp, 'comment')
            det.append('Sex parameter for clinical use: ' + (g(v, 'valueCodeableConcept.coding.display') if v else '')
                       + (f" - {g(cm,'valueString')}" if cm else ''))
        for s in gl(o, 'supportingInfo'):
            det.append('Supporting info: ' + (g(s, 'display') or g(s, 'reference')))
        for n in gl(o, 'note'): det.append('Note: ' + g(n, 'text'))
        det.append('Order no.: ' + g(o, 'identifier.value'))
        for dline in det: L += wrapl('      ' + dline, '        ')
    ctx = []
    for o in orders:
        for s in gl(o, 'supportingInfo'):
            r = g(s, 'reference')
            if r.startswith('DocumentReference/'):
                dr = st.get(r.split('/')[-1])
                data = g(dr, 'content.attachment.data')
                if data: ctx.append(base64.b64decode(data).decode('utf-8'))
            if r.startswith('Observation/'):
                ob = st.get(r.split('/')[-1])
                lab, v = cc(g(ob, 'code')), cc(g(ob, 'valueCodeableConcept'))
                if ob and not (lab.replace('-', '').isdigit() and v.isdigit()): ctx.append(f"{lab}: {v}")
    if ctx:
        L += ['', 'CLINICAL NOTES']
        for c in dict.fromkeys(ctx): L += wrapl('  ' + c, '  ')
    enc = st.get(ref(first, 'encounter'))
    if enc:
        loc = st.get(ref(g(enc, 'location'), 'location')) if g(enc, 'location') else {}
        L.append(f"  Encounter: {g(enc,'class.display') or g(enc,'class.code')} {g(enc,'period.start')}" +
                 (f" at {g(loc,'name')}" if loc else ''))
    L += [''] + fmt_person(person(st, ref(first, 'requester')), 'REQUESTING PRACTITIONER')
    for cr in commreqs:
        cat2 = cc(g(cr, 'category'))
        if 'Copy' in cat2:
            for r in gl(cr, 'recipient'):
                pp = person(st, g(r, 'reference').split('/')[-1])
                L.append(f"COPY REPORTS TO: {pp['name']}, {pp['role']} ({'; '.join(f'{a} {b}' for a, b in pp['ids'])})")
        elif 'Urgent' in cat2:
            L.append(f"URGENT RESULTS: please {g(cr,'medium.text') or 'contact'} the requester ({g(cr,'priority')})")
        else:
            L.append(f"Patient preference: {'do NOT contact by ' if g(cr,'doNotPerform')=='true' else 'contact by '}"
                     f"{g(cr,'medium.text')} (recorded {g(cr,'authoredOn')})")
    L += ['', "Requesting practitioner's signature: ______________________   Date: ____________"]
    return L

def comm_doc(st, cr):
    cat = cc(g(cr, 'category'))
    L = ['COMMUNICATION REQUEST - ' + cat.upper(), '']
    L.append(f"Request group no.: {g(cr,'groupIdentifier.value')}   ({g(cr,'groupIdentifier.assigner.display')})")
    L.append(f"Status: {g(cr,'status')}" + (f"   Priority: {g(cr,'priority')}" if g(cr, 'priority') else '')
             + f"   Authored: {g(cr,'authoredOn')}")
    L.append(f"Medium: {cc(g(cr,'medium'))}" + ('   DO NOT PERFORM' if g(cr, 'doNotPerform') == 'true' else ''))
    L += [''] + patient_block(st, ref(cr, 'subject'), 'box')
    L += ['', 'Regarding request(s):']
    for a in gl(cr, 'about'):
        o = st.get(g(a, 'reference').split('/')[-1])
        L.append(f"  - {cc(g(o,'code'))}  (order {g(o,'identifier.value')}, requested {g(o,'authoredOn')})")
    L.append('')
    L += fmt_person(person(st, ref(cr, 'requester')), 'Requested by')
    for r in gl(cr, 'recipient'):
        L += fmt_person(person(st, g(r, 'reference').split('/')[-1]), 'Recipient')
    L += fmt_person(person(st, ref(cr, 'sender')), 'Sender')
    for t in [x for x in st.by_id.values() if x.get('_type') == 'Task' and ref(x, 'focus') == g(cr, 'id')]:
        L += ['', f"Fulfilment task: status {g(t,'status')}, priority {g(t,'priority')}, owner {person(st, ref(t,'owner'))['name']}"]
    return L

def consent_doc(st, c):
    L = ['MY HEALTH RECORD - WITHDRAWAL OF CONSENT TO UPLOAD', '']
    L += patient_block(st, ref(c, 'patient'), 'box')
    L += ['', f"Scope: {cc(g(c,'scope'))}      Category: {cc(g(c,'category'))}",
          f"Date: {g(c,'dateTime')}      Status: {g(c,'status')}",
          f"Policy: {g(c,'policy.uri')}  (authority {g(c,'policy.authority')})",
          f"Policy rule: {cc(g(c,'policyRule'))}", '']
    pv = g(c, 'provision')
    L.append(f"Provision: {g(pv,'type').upper()} - action: {cc(g(pv,'action'))}; class: {g(pv,'class.code')}")
    for d in gl(pv, 'data'):
        o = st.get(g(d, 'reference.reference').split('/')[-1])
        L.append(f"  Applies to ({g(d,'meaning')}): {cc(g(o,'code'))}  order {g(o,'identifier.value')}")
    L.append('')
    L += fmt_person(person(st, ref(c, 'performer')), 'Withdrawn by')
    L += fmt_person(person(st, ref(c, 'organization')), 'Organisation')
    L += ['', 'Patient signature: ____________________________   Date: ____________',
          'Witness (staff member): _______________________']
    return L

def task_doc(st, t):
    tag = g(t, 'meta.tag.code')
    L = ['ORDER FULFILMENT TASK' + (' GROUP' if 'group' in tag else ''), '']
    L.append(f"Placer group no.: {g(t,'groupIdentifier.value')}   ({g(t,'groupIdentifier.assigner.display')})")
    if g(t, 'identifier.value'): L.append(f"Placer order no.: {g(t,'identifier.value')}")
    L.append(f"Task: {cc(g(t,'code'))}   Status: {g(t,'status')}   Intent: {g(t,'intent')}   Priority: {g(t,'priority')}")
    L.append(f"Authored: {g(t,'authoredOn')}")
    if ref(t, 'partOf'): L.append(f"Part of: {ref(t,'partOf')}")
    L += [''] + patient_block(st, ref(t, 'for'), 'box') + ['']
    fo = ref(t, 'focus')
    if fo:
        o = st.get(fo)
        L.append(f"Focus: {cc(g(o,'code'))}  (order {g(o,'identifier.value')})")
    members = [x for x in st.by_id.values() if x.get('_type') == 'Task' and ref(x, 'partOf') == g(t, 'id')]
    if members:
        L.append('Tasks in this group:')
        for m in members:
            o = st.get(ref(m, 'focus'))
            L.append(f"  - {cc(g(o,'code')) or g(o,'id')}   status {g(m,'status')}, priority {g(m,'priority')}")
    L += [''] + fmt_person(person(st, ref(t, 'requester')), 'Requester') + fmt_person(person(st, ref(t, 'owner')), 'Owner (filler)')
    return L

def main():
    repo = sys.argv[1]; out = sys.argv[2] if len(sys.argv) > 2 else 'corpus/sources/' + SRC
    st = Store(repo)
    orders = [d for d in st.by_id.values() if d['_type'] == 'ServiceRequest']
    crs = [d for d in st.by_id.values() if d['_type'] == 'CommunicationRequest']
    groups = {}
    for o in orders:
        groups.setdefault(g(o, 'requisition.value'), []).append(o)
    docs = []
    for k in sorted(groups):
        rel = [c for c in crs if g(c, 'groupIdentifier.value') == k]
        docs.append((request_form(st, groups[k], rel), ', '.join(st.path[g(o, 'id')] for o in groups[k])))
    for c in sorted(crs, key=lambda c: g(c, 'id')):
        docs.append((comm_doc(st, c), st.path[g(c, 'id')]))
    for c in [d for d in st.by_id.values() if d['_type'] == 'Consent']:
        docs.append((consent_doc(st, c), st.path[g(c, 'id')]))
    for t in sorted([d for d in st.by_id.values() if d['_type'] == 'Task' and 'group' in g(d, 'meta.tag.code')],
                    key=lambda t: g(t, 'id')):
        docs.append((task_doc(st, t), st.path[g(t, 'id')]))
    toml = []
    for i, (L, origin) in enumerate(docs, 1):
        did = f'{SRC}-{i}'
        lines = []
        for l in L:
            lines += (textwrap.wrap(l, 95, subsequent_indent='    ') or ['']) if len(l) > 95 else [l]
        txt = '\n'.join(x.rstrip() for x in lines) + '\n'
        open(os.path.join(out, did + '.txt'), 'w').write(txt)
        toml.append(f'[[doc]]\nid = "{did}"\ntype = "ADMINISTRATIVE"\nfile = "{did}.txt"\n'
                    f'origin = {json.dumps(origin)}\ntitle = {json.dumps(lines[0])}\n')
    open(os.path.join(out, 'docs.toml'), 'w').write('\n'.join(toml))
    print(len(docs), 'docs')

if __name__ == '__main__':
    main()
