#!/usr/bin/env python3
"""Independent, stdlib-only ELF reader that prints the subset of
`kopolicy info --json` (schema_version 1) that compare-info.py checks.

usage: ref-elf.py info --json FILE|DIR...

Not a reference for the tests: a second implementation used to validate
compare-info.py itself (its modinfo/readelf/Module.symvers references and its
comparator) without the C binary:
    tests/corpus/check-corpus.sh tests/corpus/ref-elf.py [TREE...]
Slow (pure Python, one process): ~15-80 s per tree.
"""
import gzip, json, lzma, os, struct, subprocess, sys

def load(path):
    data = open(path, 'rb').read()
    if path.endswith('.xz'): data = lzma.decompress(data)
    elif path.endswith('.gz'): data = gzip.decompress(data)
    elif path.endswith('.zst'): data = subprocess.run(['zstd', '-dcq', path], stdout=subprocess.PIPE, check=True).stdout
    return data

def info(path):
    """One module's facts (64/32-bit, either endianness, REL or RELA)."""
    d = load(path)
    assert d[:4] == b'\x7fELF'
    c64 = d[4] == 2; E = '<' if d[5] == 1 else '>'
    if c64:
        shoff, = struct.unpack_from(E + 'Q', d, 0x28); shentsize, shnum, shstrndx = struct.unpack_from(E + 'HHH', d, 0x3a)
    else:
        shoff, = struct.unpack_from(E + 'I', d, 0x20); shentsize, shnum, shstrndx = struct.unpack_from(E + 'HHH', d, 0x2e)
    secs = []
    for i in range(shnum):
        o = shoff + i * shentsize
        if c64: nm, ty, fl, ad, off, sz, ln, inf, al, es = struct.unpack_from(E + 'IIQQQQIIQQ', d, o)
        else: nm, ty, fl, ad, off, sz, ln, inf, al, es = struct.unpack_from(E + 'IIIIIIIIII', d, o)
        secs.append(dict(nm=nm, type=ty, off=off, size=sz, link=ln, info=inf, es=es))
    sh = secs[shstrndx]
    def cstr(off):
        e = d.index(b'\0', off); return d[off:e].decode('utf-8', 'surrogateescape')
    for s in secs: s['name'] = cstr(sh['off'] + s['nm'])
    byname = {s['name']: s for s in secs}
    def sdata(s): return d[s['off']:s['off'] + s['size']]
    # modinfo
    mi = []
    if '.modinfo' in byname:
        for rec in sdata(byname['.modinfo']).split(b'\0'):
            if b'=' in rec:
                k, _, v = rec.partition(b'='); mi.append((k.decode(), v.decode('utf-8', 'surrogateescape')))
    def tags(k): return [v for kk, v in mi if kk == k]
    def tag(k):
        t = tags(k); return t[0] if t else None
    # symtab
    st = next(s for s in secs if s['type'] == 2)
    strt = secs[st['link']]
    syms = []
    for i in range(st['size'] // st['es']):
        o = st['off'] + i * st['es']
        if c64: nm, inf, oth, shn, val, sz = struct.unpack_from(E + 'IBBHQQ', d, o)
        else: nm, val, sz, inf, oth, shn = struct.unpack_from(E + 'IIIBBH', d, o)
        syms.append(dict(name=cstr(strt['off'] + nm), bind=inf >> 4, shn=shn, value=val))
    imports = [dict(name=s['name'], weak=s['bind'] == 2) for i, s in enumerate(syms) if i and s['shn'] == 0]
    # this_module name
    tm = byname.get('.gnu.linkonce.this_module')
    name = None
    if tm:
        o = tm['off'] + (24 if c64 else 12); name = d[o:d.index(b'\0', o)].decode()
    # versions
    versions = []
    if '__versions' in byname:
        v = sdata(byname['__versions']); rs = 64
        for o in range(0, len(v), rs):
            crc = struct.unpack_from(E + ('Q' if c64 else 'I'), v, o)[0]
            nmo = o + (8 if c64 else 4)
            versions.append(dict(name=v[nmo:v.index(b'\0', nmo)].decode(), crc='0x%08x' % (crc & 0xffffffff)))
    # relocations per target section
    rels = {}
    for s in secs:
        if s['type'] in (4, 9):
            tgt = secs[s['info']]['name']; symsec = secs[s['link']]
            ents = {}
            for i in range(s['size'] // s['es']):
                o = s['off'] + i * s['es']
                if c64:
                    if s['type'] == 4: ro, ri, ra = struct.unpack_from(E + 'QQq', d, o)
                    else: (ro, ri), ra = struct.unpack_from(E + 'QQ', d, o), None
                    sym, typ = ri >> 32, ri & 0xffffffff
                else:
                    if s['type'] == 4: ro, ri, ra = struct.unpack_from(E + 'IIi', d, o)
                    else: (ro, ri), ra = struct.unpack_from(E + 'II', d, o), None
                    sym, typ = ri >> 8, ri & 0xff
                ents[ro] = (sym, ra)
            rels[tgt] = ents
    ptr = 8 if c64 else 4
    def resolve(secname, off, width):
        """string pointed to by field at off of section secname"""
        r = rels.get(secname, {}).get(off)
        if r is None: return None
        sym, ra = r
        if ra is None:  # REL: implicit addend
            ra = struct.unpack_from(E + ('i' if width == 4 else 'q'), d, byname[secname]['off'] + off)[0]
        # absolute (S + A) and PREL32 (S + A - P, so P + field = S + A) both
        # point at S + A; in ET_REL st_value is relative to its section
        s = syms[sym]; tsec = secs[s['shn']]
        return cstr(tsec['off'] + s['value'] + ra)
    machine, = struct.unpack_from(E + 'H', d, 0x12)
    prel = machine in (62, 183)  # x86_64, aarch64: CONFIG_HAVE_ARCH_PREL32_RELOCATIONS
    exports = []
    flags = byname.get('__kflagstab')
    for cls in ('__ksymtab', '__ksymtab_gpl'):
        s = byname.get(cls)
        if not s: continue
        es = 12 if (prel or not c64) else 3 * ptr
        fw = 4 if (prel or not c64) else ptr
        crcs = byname.get(cls.replace('ksymtab', 'kcrctab'))
        for i in range(s['size'] // es):
            base = i * es
            nm = resolve(cls, base + fw, fw)
            ns = resolve(cls, base + 2 * fw, fw)
            crc = None
            if crcs:
                crc = '0x%08x' % struct.unpack_from(E + 'I', d, crcs['off'] + 4 * i)[0]
            gpl = cls.endswith('_gpl')
            # v7.1+: one __ksymtab, GPL-only = bit 0 of the parallel __kflagstab byte
            if flags and cls == '__ksymtab':
                gpl = bool(d[flags['off'] + i] & 1)
            exports.append(dict(name=nm, gpl_only=gpl, namespace=ns or None, crc=crc))
    lic = tags('license')
    dep = tag('depends')
    sig = d.endswith(b'~Module signature appended~\n')
    return dict(path=path, name=name, modinfo_name=tag('name'), license=lic[0] if lic else None, licenses=lic,
                vermagic=tag('vermagic'), depends=[x for x in dep.split(',') if x] if dep else [],
                srcversion=tag('srcversion'), intree=tag('intree') == 'Y', import_ns=tags('import_ns'),
                signed=sig, imports=imports, exports=exports, versions=versions)

def main():
    assert sys.argv[1:3] == ['info', '--json']
    files = []
    for a in sys.argv[3:]:
        if os.path.isdir(a):
            for dp, _, fns in os.walk(a):
                files += [os.path.join(dp, f) for f in fns
                          if f.endswith(('.ko', '.ko.xz', '.ko.zst', '.ko.gz'))]
        else: files.append(a)
    mods, errs = [], []
    for f in sorted(files):
        try: mods.append(info(f))
        except Exception as e: errs.append(dict(path=f, error=repr(e)))
    json.dump(dict(schema_version=1, modules=mods, errors=errs), sys.stdout)

if __name__ == '__main__':
    main()
