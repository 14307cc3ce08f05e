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

The queue commands' layouts come from code as well: ibv_cmd_create_cq,
_cq_ex, _qp_ex2 and _srq hand _write_set_uhw() the size of their core
request and core response (what comes after is the driver's udata), and
ibv_qp_to_qp_ex tests VERBS_QP_EX at verbs_qp.comp_mask, which moved
between rdma-core 44 and 56 (the provider finds it at run time; the check
is that it lies within the room the provider leaves).

ibv_cmd_alloc_mw, ibv_cmd_open_xrcd and ibv_cmd_open_qp pass their core
sizes to _execute_cmd_write; rxe's alloc_mw and mlx5's open_xrcd and
open_qp pass the sizes of their command and response (no udata), and
rxe's alloc_mw callocs a bare struct ibv_mw. ibv_cmd_open_xrcd stores
VERBS_XRCD_HANDLE and the handle into its verbs_xrcd argument, which
mlx5's open_xrcd callocs bare and passes the size of.

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
# Another rdma-core than the host's: its headers ($IBVERBS_INCDIR, ahead of
# the system's), its archives ($IBVERBS_LIBDIR) and its private ABI
# ($IBVERBS_PABI: the header's layout and the providers' archive names).
PABI = os.environ.get('IBVERBS_PABI', '34')
INCDIR = os.environ.get('IBVERBS_INCDIR')

# siw_dev_ops member -> the symbol rdma-core 44..65 stores there.
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


def disasm(obj, func, relocs=False):
    """The instructions of func (any rdmacore<ver>_ prefix) as text lines.

    With relocs, each relocation follows its instruction as a line of its own
    ("<offset>: R_X86_64_PLT32 <symbol>-0x4").
    """
    args = ['objdump', '-d', '--no-show-raw-insn'] + (['-r'] if relocs else []) + [obj]
    out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
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


def xrcd_stores(insns):
    """{'comp_mask': off, 'handle': off} from ibv_cmd_open_xrcd's stores into xrcd.

    It stores VERBS_XRCD_HANDLE (1) into comp_mask, then the handle from a
    register into the next field, through the same register; which one
    holds xrcd differs between releases.
    """
    for i, ins in enumerate(insns):
        m = re.match(r'movl\s+\$0x1,(0x[0-9a-f]+)\((%r\w+)\)$', ins)
        if not m:
            continue
        for later in insns[i + 1:i + 4]:
            h = re.match(r'mov\s+%e\w+,(0x[0-9a-f]+)\(' + m.group(2) + r'\)$', later)
            if h:
                return {'comp_mask': int(m.group(1), 16), 'handle': int(h.group(1), 16)}
    return {}


def uhw_sizes(insns):
    """(core request size, core response size) a function hands _write_set_uhw.

    Its third argument (%edx) and sixth (%r9d), the last constants loaded
    into them before the first call to it.
    """
    req = resp = None
    for ins in insns:
        m = re.match(r'mov\s+\$(0x[0-9a-f]+),%edx$', ins)
        if m:
            req = int(m.group(1), 16)
        m = re.match(r'mov\s+\$(0x[0-9a-f]+),%r9d$', ins)
        if m:
            resp = int(m.group(1), 16)
        if re.search(r'R_X86_64_PLT32\s+\S*_write_set_uhw', ins):
            return req, resp
    return None, None


def qp_ex_mask_offset(insns):
    """The offset ibv_qp_to_qp_ex tests VERBS_QP_EX (0x2) at, in its argument."""
    for ins in insns:
        m = re.match(r'testb\s+\$0x2,(0x[0-9a-f]+)\(%rdi\)$', ins)
        if m:
            return int(m.group(1), 16)
    return None


def call_consts(insns, callee):
    """{register or 'push': constant} loaded before the first call to callee.

    The last constant moved into each 32-bit register, and the last
    constant pushed (the first stack argument), before the call; insns
    must come with relocations (disasm(..., relocs=True)).
    """
    out = {}
    for ins in insns:
        m = re.match(r'mov\s+\$(0x[0-9a-f]+),%(\w+)$', ins)
        if m:
            out[m.group(2)] = int(m.group(1), 16)
        m = re.match(r'push\s+\$(0x[0-9a-f]+)$', ins)
        if m:
            out['push'] = int(m.group(1), 16)
        if re.search(r'R_X86_64_PLT32\s+\S*%s-' % callee, ins):
            return out
    return {}


def stack_args(insns, callee):
    """How many arguments are pushed for the first call to callee.

    The pushes after the call before it (gcc pushes a call's stack
    arguments right before the call); insns come with relocations.
    """
    pushes = before_call = 0
    for ins in insns:
        if re.match(r'call\s', ins):
            before_call, pushes = pushes, 0
        if re.match(r'push\s', ins):
            pushes += 1
        # The call's relocation is the line after it.
        if re.search(r'R_X86_64_PLT32\s+\S*%s-' % callee, ins):
            return before_call
    return None


def header_params(header, func, outdir):
    """The parameter names of func as the header declares it for PABI."""
    out = preprocessed(header, outdir)
    m = re.search(r'\bint %s\(([^;]*?)\);' % func, out, re.S)
    if not m:
        raise LookupError('%s not declared in %s' % (func, header))
    return [re.findall(r'\w+', p)[-1] for p in m.group(1).split(',')]


ARG_REGS = ['rdi', 'rsi', 'edx', 'ecx', 'r8d', 'r9d']


def extract(archive, member, outdir):
    subprocess.run(['ar', 'x', '--output', outdir, archive, member], check=True)
    return os.path.join(outdir, member)


def preprocessed(header, outdir):
    """The header as the compiler sees it for PABI, its #ifs resolved."""
    src = os.path.join(outdir, 'pp.c')
    with open(src, 'w') as f:
        f.write('#include "%s"\n' % header)
    return subprocess.run([CC, '-E', '-P', *cflags(), '-I' + UAPI, src], check=True,
                          capture_output=True, text=True).stdout


def cflags():
    return ['-DIBVERBS_PABI_VERSION=' + PABI] + (['-isystem', INCDIR] if INCDIR else [])


def header_members(header, struct, outdir):
    text = preprocessed(header, outdir)
    body = re.search(r'struct %s \{(.*?)\n\};' % struct, text, re.S).group(1)
    return re.findall(r'\(\*(\w+)\)\(', body)


def header_values(header, exprs, outdir):
    """{name: value} of each size_t expression, compiled against the header."""
    src = os.path.join(outdir, 'values.c')
    exe = os.path.join(outdir, 'values')
    with open(src, 'w') as f:
        f.write('#include <stdio.h>\n#include "%s"\nint main(void)\n{\n' % header)
        for name, expr in exprs.items():
            f.write('\tprintf("%s %%zu\\n", (size_t)(%s));\n' % (name, expr))
        f.write('\treturn 0;\n}\n')
    subprocess.run([CC, *cflags(), '-I' + UAPI, '-o', exe, src], check=True)
    out = subprocess.run([exe], check=True, capture_output=True, text=True).stdout
    return dict((k, int(v)) for k, v in (line.split() for line in out.splitlines()))


def header_offsets(header, struct, members, outdir):
    exprs = {'size': 'sizeof(struct %s)' % struct}
    for m in members:
        exprs[m] = 'offsetof(struct %s, %s)' % (struct, m)
    return header_values(header, exprs, outdir)


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
        members = header_members(header, 'verbs_context_ops', tmp)
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
        siw = relocs_in(extract(libfile('libsiw-rdmav%s.a' % PABI), 'siw.c.o', tmp), 'siw_dev_ops')
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

        # ibv_cmd_* -> (object, command struct, core response struct)
        creates = {
            'ibv_cmd_create_cq': ('cmd_cq.c.o', 'ibv_create_cq', 'ib_uverbs_create_cq_resp'),
            'ibv_cmd_create_cq_ex': ('cmd_cq.c.o', 'ibv_create_cq_ex',
                                     'ib_uverbs_ex_create_cq_resp'),
            'ibv_cmd_create_qp_ex2': ('cmd_qp.c.o', 'ibv_create_qp_ex',
                                      'ib_uverbs_ex_create_qp_resp'),
            'ibv_cmd_create_srq': ('cmd_srq.c.o', 'ibv_create_srq',
                                   'ib_uverbs_create_srq_resp'),
            'ibv_cmd_create_srq_ex': ('cmd_srq.c.o', 'ibv_create_xsrq',
                                      'ib_uverbs_create_srq_resp'),
        }
        exprs = {}
        for func, (_, req, resp) in creates.items():
            exprs[func + '.req'] = 'sizeof(struct %s)' % req
            exprs[func + '.resp'] = 'sizeof(struct %s)' % resp
        exprs['comp_mask'] = 'offsetof(struct verbs_qp, comp_mask)'
        exprs['room'] = 'VERBS_QP_ROOM'
        ours = header_values(header, exprs, tmp)
        for func, (member, req, resp) in creates.items():
            obj = extract(libfile('libibverbs.a'), member, tmp)
            theirs = uhw_sizes(disasm(obj, func, relocs=True))
            want = (ours[func + '.req'], ours[func + '.resp'])
            check('%s core sizes' % func, theirs == want,
                  'header %s/%s %s, libibverbs %s' % (req, resp, want, theirs))

        obj = extract(libfile('libibverbs.a'), 'verbs.c.o', tmp)
        off = qp_ex_mask_offset(disasm(obj, 'ibv_qp_to_qp_ex'))
        fits = (off is not None and off >= ours['comp_mask'] and off % 8 == 0 and
                off + 16 <= ours['room'])
        check('verbs_qp.comp_mask within VERBS_QP_ROOM', fits,
              'libibverbs tests it at %s, header has %#x, room %#x' %
              (off and hex(off), ours['comp_mask'], ours['room']))

        # Commands with no udata: each hands _execute_cmd_write the core
        # request size in %ecx and the core response size as its first
        # stack argument. rxe's alloc_mw passes cmd_size in %r8d, mlx5's
        # open_xrcd and open_qp in %r9d, and resp_size on the stack.
        rxe = extract(libfile('librxe-rdmav%s.a' % PABI), 'rxe.c.o', tmp)
        mlx5 = extract(libfile('libmlx5.a'), 'verbs.c.o', tmp)
        plain = {
            'ibv_cmd_alloc_mw': ('ibv_alloc_mw', 'ib_uverbs_alloc_mw_resp', rxe,
                                 'rxe_alloc_mw', 'r8d'),
            'ibv_cmd_open_xrcd': ('ibv_open_xrcd', 'ib_uverbs_open_xrcd_resp', mlx5,
                                  'mlx5_open_xrcd', 'r9d'),
            'ibv_cmd_open_qp': ('ibv_open_qp', 'ib_uverbs_create_qp_resp', mlx5,
                                'mlx5_open_qp', 'r9d'),
        }
        exprs = {'mw': 'sizeof(struct ibv_mw)', 'xrcd': 'sizeof(struct verbs_xrcd)',
                 'xrcd.comp_mask': 'offsetof(struct verbs_xrcd, comp_mask)',
                 'xrcd.handle': 'offsetof(struct verbs_xrcd, handle)'}
        for func, (req, resp, _, _, _) in plain.items():
            exprs[func + '.req'] = 'sizeof(struct %s)' % req
            exprs[func + '.resp'] = 'sizeof(struct %s)' % resp
        ours = header_values(header, exprs, tmp)
        for func, (req, resp, obj, caller, reg) in plain.items():
            want = (ours[func + '.req'], ours[func + '.resp'])
            got = call_consts(disasm(cmd, func, relocs=True), '_execute_cmd_write')
            theirs = (got.get('ecx'), got.get('push'))
            check('%s core sizes' % func, theirs == want,
                  'header %s/%s %s, libibverbs %s' % (req, resp, want, theirs))
            got = call_consts(disasm(obj, caller, relocs=True), func)
            theirs = (got.get(reg), got.get('push'))
            check('%s command sizes' % caller, theirs == want,
                  'header %s, %s passes %s' % (want, caller, theirs))

        theirs = xrcd_stores(disasm(cmd, 'ibv_cmd_open_xrcd'))
        wrong = [m for m in ('comp_mask', 'handle') if theirs.get(m) != ours['xrcd.' + m]]
        check('verbs_xrcd member offsets', not wrong,
              ', '.join('%s: header %#x, ibv_cmd_open_xrcd %s' %
                        (m, ours['xrcd.' + m], theirs.get(m) and hex(theirs[m]))
                        for m in wrong))
        insns = disasm(mlx5, 'mlx5_open_xrcd', relocs=True)
        size = calloc_size(insns)
        passed_size = call_consts(insns, 'ibv_cmd_open_xrcd').get('edx')
        check('verbs_xrcd size', size == passed_size == ours['xrcd'],
              'header %#x, mlx5_open_xrcd callocs %s and passes %s' %
              (ours['xrcd'], size and hex(size), passed_size and hex(passed_size)))

        insns = disasm(rxe, 'rxe_alloc_mw', relocs=True)
        size = calloc_size(insns)
        check('ibv_mw size', size == ours['mw'],
              'header %#x, rxe_alloc_mw callocs %s' % (ours['mw'], size and hex(size)))

        # The commands whose arguments changed between releases (65 added
        # get_context's fd_arr, create_cq_ex's prov_attr, create_qp_ex2's
        # driver): rxe_alloc_context passes the core command and response
        # sizes where the header has cmd_size and resp_size, and rxe's
        # queue creations push as many stack arguments as the header has
        # past the sixth.
        sizes = header_values(header, {
            'cmd': 'sizeof(struct ibv_get_context)',
            'resp': 'sizeof(struct ib_uverbs_get_context_resp)'}, tmp)
        params = header_params(header, 'ibv_cmd_get_context', tmp)
        got = call_consts(disasm(rxe, 'rxe_alloc_context', relocs=True), 'ibv_cmd_get_context')
        theirs = tuple(got.get(ARG_REGS[params.index(p)]) for p in ('cmd_size', 'resp_size'))
        check('ibv_cmd_get_context arguments', theirs == (sizes['cmd'], sizes['resp']),
              'header (%s) takes cmd_size and resp_size as %s, rxe_alloc_context passes %s' %
              (', '.join(params), (sizes['cmd'], sizes['resp']), theirs))
        for func, caller in (('ibv_cmd_create_cq_ex', 'rxe_create_cq_ex'),
                             ('ibv_cmd_create_qp_ex2', 'rxe_create_qp_ex')):
            params = header_params(header, func, tmp)
            pushed = stack_args(disasm(rxe, caller, relocs=True), func)
            check('%s arguments' % func, pushed == max(len(params) - 6, 0),
                  'header has %d, %s pushes %s past the sixth' % (len(params), caller, pushed))

    print('abi-check: %d passed, %d failed' % (passed, failed))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
