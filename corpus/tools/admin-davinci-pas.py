"""admin-davinci-pas: renders the Da Vinci Prior Authorization Support IG (HL7/davinci-pas, CC0)
FSH examples (input/fsh/Examples.fsh) as printed prior-authorization request forms, determination
notices and an additional-information request.
usage: python3 admin-davinci-pas.py <git-dir of HL7/davinci-pas> [out-folder]"""
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

SRC = 'admin-davinci-pas'

def fdate(v):
    return text(v).split('T')[0] if v else ''

def ext(n, name):
    """value node of extension[name] (any value[x])"""
    e = get(n, f'extension[{name}]')
    if e is None: return None
    return e

def extval(n, name):
    e = ext(n, name)
    if e is None: return ''
    for k in e:
        if k.startswith('value'):
            x = e[k][0]
            if x.v is not None:
                return cc(x) if '#' in (x.v or '') else text(x.v)
            if k == 'valuePeriod':
                return f"{fdate(val(x,'start'))} to {fdate(val(x,'end'))}"
            if k == 'valueIdentifier':
                return text(val(x, 'value'))
            if k == 'valueMoney':
                return '$' + text(val(x, 'value'))
            if k == 'valueQuantity':
                return text(val(x, 'value'))
    return ''

def person(insts, r):
    if r not in insts: return r or ''
    h, n = insts[r]
    if h.get('InstanceOf', '').endswith('PractitionerRole'):
        p = ref(val(n, 'practitioner'))
        return person(insts, p)
    nm = get(n, 'name')
    if nm is not None and nm.v is None:
        return f"{text(val(nm,'given'))} {text(val(nm,'family'))}".strip()
    return text(val(n, 'name')) or r

def addr(n):
    a = get(n, 'address')
    if a is None: return ''
    return f"{text(val(a,'line'))}, {text(val(a,'city'))}, {text(val(a,'state'))} {text(val(a,'postalCode'))}".strip(', ')

def field(label, value, w=30):
    return f"{label + ':':<{w}}{value if value else '_' * 20}"

def parties(insts, n, L, requester_key):
    pat = ref(val(n, 'patient'))
    ins = ref(val(n, 'insurer'))
    prov = ref(val(n, requester_key))
    L += ['', 'SECTION A - PAYER (UTILIZATION MANAGEMENT ORGANIZATION)']
    if ins in insts:
        i = insts[ins][1]
        L.append(field('  Payer name', text(val(i, 'name'))))
        L.append(field('  Payer identifier (NPI)', text(val(i, 'identifier.value'))))
    L += ['', 'SECTION B - REQUESTING PROVIDER']
    if prov in insts:
        p = insts[prov][1]
        L.append(field('  Name', person(insts, prov)))
        ident = text(val(p, 'identifier.value'))
        if not ident and ref(val(p, 'practitioner')) in insts:
            ident = text(val(insts[ref(val(p, 'practitioner'))][1], 'identifier.value'))
        L.append(field('  NPI', ident))
        a = addr(p)
        if not a and ref(val(p, 'location')) in insts:
            loc = insts[ref(val(p, 'location'))][1]
            a = text(val(loc, 'name')) + ', ' + addr(loc)
        L.append(field('  Address', a))
        if val(p, 'telecom.value'): L.append(field('  Phone', text(val(p, 'telecom.value'))))
    L += ['', 'SECTION C - PATIENT / SUBSCRIBER']
    if pat in insts:
        p = insts[pat][1]
        L.append(field('  Patient name', person(insts, pat)))
        L.append(field('  Member identification no.', text(val(p, 'identifier.value'))))
        L.append(field('  Gender', code(val(p, 'gender'))))
        L.append(field('  Date of birth', text(val(p, 'birthDate'))))
        ms = extval(p, 'militaryStatus')
        if ms: L.append(field('  Military status (X12 584)', ms))
    cov = ref(val(n, 'insurance.coverage'))
    if cov in insts:
        c = insts[cov][1]
        L.append(field('  Subscriber ID', text(val(c, 'subscriberId'))))
        rel = [code(x.v) for x in all_(get(c, 'relationship'), 'coding') if x.v]
        L.append(field('  Relationship to subscriber', ' / '.join(rel)))

def item_lines(insts, it, L):
    seq = text(val(it, 'sequence')) or text(val(it, 'itemSequence'))
    L.append(f"  Line {seq}")
    rows = []
    if val(it, 'category'): rows.append(('Service type', cc(it, 'category')))
    if val(it, 'productOrService'): rows.append(('Procedure / service code', cc(it, 'productOrService')))
    if val(it, 'servicedDate'): rows.append(('Date of service', fdate(val(it, 'servicedDate'))))
    if val(it, 'locationCodeableConcept'): rows.append(('Place of service', cc(it, 'locationCodeableConcept')))
    for k, lab in [('requestType', 'Request category'), ('certificationType', 'Certification type'),
                   ('authorizationNumber', 'Authorization number'),
                   ('administrationReferenceNumber', 'Administration reference no.'),
                   ('itemTraceNumber', 'Item trace number'), ('epsdtIndicator', 'EPSDT indicator'),
                   ('nursingHomeResidentialStatus', 'Nursing home residential status'),
                   ('nursingHomeLevelOfCare', 'Nursing home level of care'),
                   ('revenueUnitRateLimit', 'Revenue unit rate limit'),
                   ('infoChanged', 'Information changed'),
                   ('certIssueDate', 'Certification issue date'), ('certEffectiveDate', 'Certification effective'),
                   ('certExpirationDate', 'Certification expiration'), ('reviewActionCode', 'Review action'),
                   ('productOrServiceCodeEnd', 'Service code range end'),
                   ('requestedServiceDate', 'Requested service dates'), ('preAuthIssueDate', 'Authorization issue date'),
                   ('preAuthPeriod', 'Authorization period')]:
        v = extval(it, k)
        if v: rows.append((lab, v))
    if val(it, 'modifierExtension[infoCancelledFlag].valueBoolean') == 'true':
        rows.append(('Line cancelled', 'yes'))
    rq = ref(val(it, 'extension[requestedService].valueReference'))
    if rq in insts:
        s = insts[rq][1]
        rows.append(('Requested service', f"{cc(s,'code')} - quantity {text(val(s,'quantityQuantity')).split(chr(39))[0].strip()} {text(val(s,'quantityQuantity')).split(chr(34))[-2] if chr(34) in (val(s,'quantityQuantity') or '') else ''}"))
    ap = get(it, 'extension[authorizedProvider]')
    if ap is not None:
        rows.append(('Authorized provider', person(insts, ref(val(ap, 'extension[provider].valueReference'))) +
                     ' (type ' + code(val(ap, 'extension[providerType].valueCodeableConcept')) + ')'))
    ad = get(it, 'extension[authorizedItemDetail]')
    if ad is not None:
        rows.append(('Authorized service', f"{extval(ad,'productOrServiceCode')}, unit price {extval(ad,'unitPrice')}, quantity {extval(ad,'quantity')}"))
    for a in all_(it, 'adjudication'):
        ra = get(a, 'extension[reviewAction]')
        if ra is not None:
            rows.append(('Review action', extval(ra, 'code')))
            if extval(ra, 'number'): rows.append(('Review/certification number', extval(ra, 'number')))
    for lab, v in rows:
        L += wrap(f"    {lab + ':':<34}{v}", 93)

def render_claim(insts, name):
    h, n = insts[name]
    L = []
    upd = 'Update' in h.get('InstanceOf', '')
    inq = 'Inquiry' in h.get('InstanceOf', '')
    title = ('PRIOR AUTHORIZATION INQUIRY' if inq else
             'PRIOR AUTHORIZATION REQUEST - UPDATE' if upd else 'PRIOR AUTHORIZATION REQUEST')
    L += [title, 'Health Care Services Review - Request for Review', '=' * 78]
    L.append(field('Submitted', fdate(val(n, 'created'))) + '    ' + f"Claim type: {code(val(n,'type'))}")
    L.append(field('Patient event tracking no.', text(val(n, 'identifier.value'))))
    if val(n, 'identifier.assigner.identifier.value'):
        L.append(field('Assigned by (user assigned)', text(val(n, 'identifier.assigner.identifier.value'))))
    lvl = extval(n, 'levelOfServiceType')
    L.append(field('Level of service', lvl) + f"    Priority: {code(val(n,'priority'))}")
    if val(n, 'related.claim'):
        L.append(field('Updates prior request', ref(val(n, 'related.claim'))))
    parties(insts, n, L, 'provider')
    dx = all_(n, 'diagnosis')
    L += ['', 'SECTION D - DIAGNOSIS']
    if dx:
        for d in dx:
            L.append(f"  {text(val(d,'sequence'))}. ICD-10-CM {cc(d,'diagnosisCodeableConcept')}"
                     + (f"   recorded {extval(d,'recordedDate')}" if extval(d, 'recordedDate') else ''))
    else:
        L.append('  ' + '_' * 40)
    hh = get(n, 'extension[homeHealthCareInformation]')
    if hh is not None:
        L += ['', '  Home health care information: prognosis ' + extval(hh, 'prognosis') + ', date ' + extval(hh, 'date')]
    cond = get(n, 'extension[conditionCode]')
    if cond is not None:
        L += ['', f"  Condition code: category {extval(cond,'category')}, code {extval(cond,'code')}, indicator {extval(cond,'indicator')}"]
    enc = ref(val(n, 'extension[encounter].valueReference'))
    for k in n:
        if k.startswith('supportingInfo'):
            for s in n[k]:
                if val(s, 'timingPeriod.start'):
                    L.append(f"  {k.split(':')[-1]}: {fdate(val(s,'timingPeriod.start'))} to {fdate(val(s,'timingPeriod.end'))}")
    if enc in insts:
        e = insts[enc][1]
        L += ['', 'SECTION E - ADMISSION', f"  Planned admission: {fdate(val(e,'period.start'))} to {fdate(val(e,'period.end'))}",
              f"  Encounter class: {code(val(e,'class'))}   Admission type: {code(val(e,'type'))}   Point of origin: {code(val(e,'hospitalization.admitSource'))}",
              f"  Patient status: {extval(e,'patientStatus')}"]
    L += ['', 'SECTION F - SERVICES REQUESTED']
    for it in all_(n, 'item'):
        item_lines(insts, it, L)
    for ct in all_(n, 'careTeam'):
        L += ['', f"  Care team {text(val(ct,'sequence'))}: {person(insts, ref(val(ct,'provider')))}"]
    for k in n:
        if k.startswith('supportingInfo'):
            for s in n[k]:
                di = get(s, 'extension[documentInformation]')
                if di is not None:
                    L += ['', 'SECTION G - SUPPORTING DOCUMENTATION',
                          f"  Report type: {extval(di,'reportTypeCode')}",
                          f"  Transmission: {extval(di,'transmissionMethod')}   Control no.: {extval(di,'controlNumber')}"]
                    L += ['  Description:'] + wrap(extval(di, 'description'), 89, '    ')
    tr = get(n, 'extension[transmissionIdentifiers]')
    if tr is not None:
        L += ['', f"  Sender: {extval(tr,'applicationSenderCode')} / {extval(tr,'interchangeSenderID')}    "
                  f"Receiver: {extval(tr,'applicationReceiverCode')} / {extval(tr,'interchangeReceiverID')}"]
    L += ['', 'Provider signature: ______________________________     Date: ____________']
    return L

def render_resp(insts, name):
    h, n = insts[name]
    L = []
    inq = 'Inquiry' in h.get('InstanceOf', '')
    outcome = code(val(n, 'outcome'))
    L += ['PRIOR AUTHORIZATION INQUIRY RESPONSE' if inq else 'PRIOR AUTHORIZATION DETERMINATION NOTICE',
          'Health Care Services Review - Response', '=' * 78]
    L.append(field('Response date', fdate(val(n, 'created'))))
    L.append(field('Patient event tracking no.', text(val(n, 'identifier.value'))))
    L.append(field('Processing outcome', outcome))
    if val(n, 'request'): L.append(field('In response to request', ref(val(n, 'request'))))
    hr = get(n, 'extension[claimResponseReviewer]')
    if hr is not None: L.append(field('Human reviewed', extval(hr, 'wasHumanReviewedFlag')))
    parties(insts, n, L, 'requestor')
    if all_(n, 'error'):
        L += ['', 'REQUEST ERRORS (X12 AAA reject reason codes)']
        for e in all_(n, 'error'):
            L.append(f"  Reject reason: {code(val(e,'code'))}")
            ee = get(e, 'extension[errorElement]')
            if ee is not None: L.append(f"    Element in error: {extval(ee,'error')}")
            if extval(e, 'errorPath'): L.append(f"    Location: {extval(e,'errorPath')}")
            if extval(e, 'followupAction'): L.append(f"    Follow-up action: {extval(e,'followupAction')}")
    if all_(n, 'item'):
        L += ['', 'DETERMINATION BY SERVICE LINE']
        for it in all_(n, 'item'):
            item_lines(insts, it, L)
    for it in all_(n, 'addItem'):
        L += ['', 'ADDITIONAL AUTHORIZED SERVICE']
        rows = [('Revenue code', extval(it, 'revenue')), ('Category', extval(it, 'category')),
                ('Admission dates', extval(it, 'admissionDates')), ('Discharge date', extval(it, 'dischargeDate')),
                ('Provider', person(insts, ref(val(it, 'provider')))), ('Service', cc(it, 'productOrService')),
                ('Quantity', text(val(it, 'quantity.value'))), ('Unit price', '$' + text(val(it, 'unitPrice.value')))]
        for a in all_(it, 'adjudication'):
            ra = get(a, 'extension[reviewAction]')
            if ra is not None:
                rows += [('Review action', extval(ra, 'code')), ('Certification number', extval(ra, 'number'))]
        for lab, v in rows:
            if v: L.append(f"    {lab + ':':<34}{v}")
    L += ['', 'This notice reflects the utilization review determination for the services listed.',
          'It is not a guarantee of payment.']
    return L

def render_task(insts, name):
    h, n = insts[name]
    L = ['REQUEST FOR ADDITIONAL INFORMATION', 'Prior Authorization - Attachment Request', '=' * 78]
    L.append(field('Status', code(val(n, 'status'))))
    L.append(field('Item trace number', text(val(n, 'identifier.value'))))
    L.append(field('Requester NPI', text(val(n, 'requester.identifier.value'))))
    L.append(field('Owner NPI', text(val(n, 'owner.identifier.value'))))
    pat = ref(val(n, 'for'))
    if pat in insts:
        p = insts[pat][1]
        L.append(field('Patient', person(insts, pat)))
        L.append(field('Member ID', text(val(p, 'identifier.value'))))
        L.append(field('Date of birth', text(val(p, 'birthDate'))))
        L.append(field('Gender', code(val(p, 'gender'))))
    rr = ref(val(n, 'reasonReference'))
    L.append(field('Regarding request', rr))
    if rr in insts:
        c = insts[rr][1]
        for it in all_(c, 'item'):
            L.append(field('  Service on request', cc(it, 'productOrService') + ' ' + fdate(val(it, 'servicedDate'))))
            L.append(field('  Authorization number', extval(it, 'authorizationNumber')))
    L += ['', 'Attachments needed:']
    an = get(n, 'input[AttachmentsNeeded]')
    if an is not None:
        L.append(f"  [ ] LOINC {code(val(an,'valueCodeableConcept'))}   (prior authorization line {extval(an,'paLineNumber')})")
    L.append(field('Return attachments to', text(val(n, 'input[PayerURL].valueUrl'))))
    cr = insts.get('CommunicationRequestExample')
    if cr:
        c = cr[1]
        L += ['', 'Additional request:', field('  Category', cc(c, 'category')),
              field('  Request identifier', text(val(c, 'identifier.value'))),
              field('  Service line', extval(c, 'serviceLineNumber')),
              field('  Diagnosis in question', extval(get(c, 'payload'), 'communicatedDiagnosis')),
              field('  Content modifier (LOINC)', extval(get(c, 'payload'), 'contentModifier')),
              field('  Requested content (LOINC)', text(val(c, 'payload.contentString')))]
    L += ['', 'Submitted by: ____________________________   Date: ____________']
    return L

def main():
    repo = sys.argv[1]; out = sys.argv[2] if len(sys.argv) > 2 else 'corpus/sources/' + SRC
    p = 'input/fsh/Examples.fsh'
    insts = parse_fsh(git_show(repo, p))
    order = ['ReferralAuthorizationExample', 'HomecareAuthorizationExample', 'HomecareAuthorizationUpdateExample',
             'MedicalServicesAuthorizationExample', 'SurgicalAuthorizationRequestExample', 'PASClaimInquiryExample',
             'PractitionerRequestorResponseExample', 'PractitionerRequestorAdditionalContentResponseExample',
             'PractitionerRequestorPendingResponseExample', 'RejectionResponseExample', 'ErrorResponseExample',
             'PASClaimInquiryResponseExample', 'AdditionalInformationTaskExample']
    docs = []
    for nm in order:
        kind = insts[nm][0]['InstanceOf']
        if kind.startswith('PASClaimInquiryResponse') or kind == 'PASClaimResponse':
            L = render_resp(insts, nm)
        elif kind == 'PASTask':
            L = render_task(insts, nm)
        else:
            L = render_claim(insts, nm)
        docs.append((nm, L))
    toml = []
    for i, (nm, L) in enumerate(docs, 1):
        did = f'{SRC}-{i}'
        txt = paginate(L)
        open(os.path.join(out, did + '.txt'), 'w').write(txt)
        toml.append(f'[[doc]]\nid = "{did}"\ntype = "ADMINISTRATIVE"\nfile = "{did}.txt"\n'
                    f'origin = "{p}#{nm}"\ntitle = {json.dumps(txt.split(chr(10))[0])}\n')
    open(os.path.join(out, 'docs.toml'), 'w').write('\n'.join(toml))
    print(len(docs), 'docs')

if __name__ == '__main__':
    main()
