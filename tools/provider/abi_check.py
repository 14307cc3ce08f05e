#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Check ibverbs_provider.h against the libibverbs installed on this host.

rdma-core ships static archives with its -dev package. Their relocations
give the layout libibverbs was built with, without its private headers:

  - verbs_dummy_ops in libibverbs.a (dummy_ops.c.o) fills every slot of
    struct verbs_context_ops with a static function named like the slot;
  - siw_dev_ops in libsiw-rdmav<PABI>.a is a struct verbs_device_ops whose
    pointer members point at functions and a match table.

struct verbs_mr has no relocations; its layout comes from code instead:
ibv_cmd_reg_mr (libibverbs.a, cmd.c.o) stores IBV_MR_TYPE_MR (0) and its
access argument through its vmr argument, and siw's reg_mr callocs a
struct siw_mr, which is a verbs_mr and nothing else.

The header's offsets (compiled with the same compiler) must equal them.
Prints one line per check and "abi-check: N passed, N failed".
"""
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
UAPI = os.path.join(HERE, '..', '..', 'include', 'uapi')
CC = os.environ.get('CC', 'cc')

# siw_dev_ops member -> the symbol rdma-core 44..56 stores there.
SIW_DEV_OPS = {
    'match_table': 'rnic_table',
    'alloc_context': 'siw_alloc_context',
    'alloc_device': 'siw_device_alloc',
    'uninit_device': 'siw_device_free',
}


def readelf(obj, *args):
    return subprocess.run(['readelf', '-W', *args, obj], check=True,
                          capture_output=True, text=True).stdout


def relocs_in(obj, suffix):
    """{byte offset: symbol} for relocations inside the object named *suffix."""
    secs = dict((int(i), n) for i, n in
                re.findall(r'^\s*\[\s*(\d+)\]\s+(\S+)', readelf(obj, '-S'), re.M))
    syms = []
    for line in readelf(obj, '-s').splitlines():
        f = line.split()
        if len(f) >= 8 and f[0].endswith(':') and f[6].isdigit():
            syms.append((int(f[1], 16), int(f[2]), f[3], secs.get(int(f[6])), f[7]))
    target = [s for s in syms if s[4] == suffix or s[4].endswith('_' + suffix)]
    if not target:
        raise LookupError('%s not in %s' % (suffix, obj))
    start, size, _, sec, _ = target[0]
    by_addr = {}
    for value, _, kind, ssec, name in syms:
        if kind in ('FUNC', 'OBJECT'):
            by_addr[(ssec, value)] = name
    out, cur = {}, None
    for line in readelf(obj, '-r').splitlines():
        m = re.match(r"Relocation section '\.rela(\S+)'", line)
        if m:
            cur = m.group(1)
            continue
        f = line.split()
        if cur != sec or len(f) < 5 or not re.match(r'^[0-9a-f]{8,}$', f[0]):
            continue
        off = int(f[0], 16)
        if not start <= off < start + size:
            continue
        name = f[4]
        if name.startswith('.') and len(f) >= 7:
            addend = int(f[6], 16) * (-1 if f[5] == '-' else 1)
            name = by_addr.get((name, addend), name)
        out[off - start] = re.sub(r'^rdmacore[0-9_]+?_(?=[a-z])', '', name)
    return out


def disasm(obj, func):
    """The instructions of func (any rdmacore<ver>_ prefix) as text lines."""
    out = subprocess.run(['objdump', '-d', '--no-show-raw-insn', obj], check=True,
                         capture_output=True, text=True).stdout
    m = re.search(r'^[0-9a-f]+ <(?:rdmacore[0-9_]+?_)?%s>:\n(.*?)(?:\n\n|\Z)' % func, out,
                  re.S | re.M)
    if not m:
        raise LookupError('%s not in %s' % (func, obj))
    return [line.split('\t', 1)[1].strip() for line in m.group(1).splitlines() if '\t' in line]


def reg_mr_stores(insns):
    """{'mr_type': off, 'access': off} from ibv_cmd_reg_mr's stores into vmr.

    vmr is the 6th argument (%r9) and access the 5th (%r8d); both are
    copied to callee-saved registers before the command is sent.
    """
    vmr = access = None
    out = {}
    for ins in insns:
        m = re.match(r'mov\s+%r9,(%r\w+)$', ins)
        if m and vmr is None:
            vmr = m.group(1)
        m = re.match(r'mov\s+%r8d,(%\w+)$', ins)
        if m and access is None:
            access = m.group(1)
        if vmr is None:
            continue
        m = re.match(r'movl\s+\$0x0,(0x[0-9a-f]+)\(%s\)$' % vmr, ins)
        if m:
            out.setdefault('mr_type', int(m.group(1), 16))
        if access:
            m = re.match(r'mov\s+%s,(0x[0-9a-f]+)\(%s\)$' % (access, vmr), ins)
            if m:
                out.setdefault('access', int(m.group(1), 16))
    return out


def calloc_size(insns):
    """The size a function passes to its first calloc(1, size)."""
    size = None
    for ins in insns:
        m = re.match(r'mov\s+\$(0x[0-9a-f]+),%esi$', ins)
        if m:
            size = int(m.group(1), 16)
        if re.match(r'call\s', ins) and size is not None:
            return size
    return None


def extract(archive, member, outdir):
    subprocess.run(['ar', 'x', '--output', outdir, archive, member], check=True)
    return os.path.join(outdir, member)


def header_members(header, struct):
    text = open(header).read()
    body = re.search(r'struct %s \{(.*?)\n\};' % struct, text, re.S).group(1)
    return re.findall(r'\(\*(\w+)\)\(', body)


def header_offsets(header, struct, members, outdir):
    src = os.path.join(outdir, 'offsets.c')
    exe = os.path.join(outdir, 'offsets')
    with open(src, 'w') as f:
        f.write('#include <stdio.h>\n#include "%s"\nint main(void)\n{\n' % header)
        f.write('\tprintf("size %%zu\\n", sizeof(struct %s));\n' % struct)
        for m in members:
            f.write('\tprintf("%s %%zu\\n", offsetof(struct %s, %s));\n' % (m, struct, m))
        f.write('\treturn 0;\n}\n')
    subprocess.run([CC, '-I' + UAPI, '-o', exe, src], check=True)
    out = subprocess.run([exe], check=True, capture_output=True, text=True).stdout
    return dict((k, int(v)) for k, v in (line.split() for line in out.splitlines()))


def libfile(name):
    """The archive the compiler would link, or the one in $IBVERBS_LIBDIR."""
    libdir = os.environ.get('IBVERBS_LIBDIR')
    if libdir:
        return os.path.join(libdir, name)
    return subprocess.run([CC, '-print-file-name=' + name], check=True,
                          capture_output=True, text=True).stdout.strip()


def main():
    header = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                             os.path.join(HERE, 'ibverbs_provider.h'))
    passed = failed = 0

    def check(what, ok, detail=''):
        nonlocal passed, failed
        print('%s %s%s' % ('ok' if ok else 'FAIL', what, (': ' + detail) if detail else ''))
        if ok:
            passed += 1
        else:
            failed += 1

    with tempfile.TemporaryDirectory() as tmp:
        members = header_members(header, 'verbs_context_ops')
        ours = header_offsets(header, 'verbs_context_ops', members, tmp)
        dummy = relocs_in(extract(libfile('libibverbs.a'), 'dummy_ops.c.o', tmp),
                          'verbs_dummy_ops')
        theirs = dict((name, off) for off, name in dummy.items())
        check('verbs_context_ops has %d ops' % len(dummy), ours['size'] == 8 * len(dummy),
              'header has %d' % (ours['size'] // 8))
        wrong = [m for m in members if theirs.get(m) != ours[m]]
        check('verbs_context_ops member offsets', not wrong, ', '.join(wrong))

        dev_members = list(SIW_DEV_OPS)
        ours = header_offsets(header, 'verbs_device_ops', dev_members, tmp)
        siw = relocs_in(extract(libfile('libsiw-rdmav34.a'), 'siw.c.o', tmp), 'siw_dev_ops')
        theirs = dict((name, off) for off, name in siw.items())
        wrong = [m for m, sym in SIW_DEV_OPS.items() if theirs.get(sym) != ours[m]]
        check('verbs_device_ops member offsets', not wrong, ', '.join(wrong))

        ours = header_offsets(header, 'verbs_mr', ['mr_type', 'access'], tmp)
        cmd = extract(libfile('libibverbs.a'), 'cmd.c.o', tmp)
        theirs = reg_mr_stores(disasm(cmd, 'ibv_cmd_reg_mr'))
        wrong = [m for m in ('mr_type', 'access') if theirs.get(m) != ours[m]]
        check('verbs_mr member offsets', not wrong,
              ', '.join('%s: header %#x, ibv_cmd_reg_mr %s' %
                        (m, ours[m], theirs.get(m) and hex(theirs[m])) for m in wrong))
        size = calloc_size(disasm(os.path.join(tmp, 'siw.c.o'), 'siw_reg_mr'))
        check('verbs_mr size', size == ours['size'],
              'header %#x, siw_reg_mr callocs %s' % (ours['size'], size and hex(size)))

    print('abi-check: %d passed, %d failed' % (passed, failed))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
