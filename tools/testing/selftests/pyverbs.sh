#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# rdma-core's own test suite (pyverbs, from python3-pyverbs) on stag0: no
# test may fail, and every test that skips must be listed with its reason
# in Documentation/pyverbs-skips.rst. When rxe0 exists (vm/run --rxe) the
# suite runs on it too, as a reference: its summary is printed, not judged.
#
# Runs in the guest (tools/testing/vm/run), which has created stag0.
#
#   STAG_TEST_DEV	the device judged (default stag0)
#   STAG_PYVERBS_TIMEOUT	seconds one device's run may take (default 600)
#   STAG_PYVERBS_REF	0: no reference run on rxe0 even when it exists
. "$(dirname "$0")/lib.sh"

dev=${STAG_TEST_DEV:-stag0}
limit=${STAG_PYVERBS_TIMEOUT:-600}
skips=$T_ROOT/Documentation/pyverbs-skips.rst
# The allocator of the dma-buf tests' buffers (pyverbs_dmabuf.c).
alloc=$T_ROOT/tools/testing/selftests/bin/pyverbs_dmabuf.so
src=/usr/share/doc/rdma-core/tests
tmp=$(mktemp -d /tmp/pyverbs.XXXXXX)
py=/usr/bin/python3

# The suite's rdmacm tests take the IP address of the netdev under
# /sys/class/infiniband/<dev>/device/net/, which a software device does not
# have, and skip without one. Fall back to the netdev the GID names.
#
# The dma-buf tests: given buffers (pyverbs_dmabuf.c), pyverbs' DmaBufMR fails on the DmaBuf it
# allocated itself, "'DmaBuf' object has no attribute 'add_ref'" (a
# method declared for C callers only; rdma-core 44 and 65 alike). Given
# a DmaBuf whose add_ref Python can call, it registers. So DmaBufMR
# allocates through such a subclass here; the tests are unchanged.
patch_base()
{
	$py - "$1" <<'EOF'
import sys

path = sys.argv[1]
text = open(path).read()
old_def = "    def _get_ip_mac(self, dev, port, idx):\n"
old_body = """\
        if not os.path.exists('/sys/class/infiniband/{}/device/net/'.format(dev)):
            self.args.append([dev, port, idx, None, None])
            return
        net_name = self.get_net_name(dev)
"""
new_def = """\
    def _net_name(self, dev, port, idx):
        if os.path.exists('/sys/class/infiniband/{}/device/net/'.format(dev)):
            return self.get_net_name(dev)
        if idx is None:
            return None
        try:
            with open('/sys/class/infiniband/{}/ports/{}/gid_attrs/ndevs/{}'
                      .format(dev, port, idx)) as f:
                return f.read().strip()
        except OSError:
            return None

"""
new_body = """\
        net_name = self._net_name(dev, port, idx)
        if not net_name:
            self.args.append([dev, port, idx, None, None])
            return
"""
if text.count(old_def + old_body) != 1:
    sys.exit("base.py: _get_ip_mac() is not the one of rdma-core 44")
dmabuf = """

import pyverbs.dmabuf as _dmabuf
import pyverbs.mr as _mr


class _DmaBuf(_dmabuf.DmaBuf):
    def add_ref(self, obj):
        pass


class _DmaBufMR(_mr.DmaBufMR):
    def __init__(self, pd, length, access, dmabuf=None, offset=0, gpu=0, gtt=0):
        if dmabuf is None:
            dmabuf = _DmaBuf(length + offset, gpu, gtt)
        super().__init__(pd, length, access, dmabuf=dmabuf, offset=offset, gpu=gpu, gtt=gtt)


_mr.DmaBufMR = _DmaBufMR
"""
open(path, "w").write(text.replace(old_def + old_body, new_def + old_def + new_body) + dmabuf)
EOF
}

# test_rss_traffic creates its WQs (ibv_create_wq) unguarded, and errors
# where the device has Raw Packet QPs and flows but no WQs (rdma_rxe, for
# the reference run): it skips here on EOPNOTSUPP, as the same class's
# create_qps() does for its QP. stag0 has WQs and runs it.
patch_rss()
{
	$py - "$1" <<'EOF'
import sys

path = sys.argv[1]
text = open(path).read()
old = "            wq = WQ(self.ctx, wqias[i % CQS_NUM])\n"
new = """\
            try:
                wq = WQ(self.ctx, wqias[i % CQS_NUM])
            except PyverbsRDMAError as ex:
                if ex.error_code == errno.EOPNOTSUPP:
                    raise unittest.SkipTest('Create WQ is not supported')
                raise ex
"""
if text.count(old) != 1:
    sys.exit("test_rss_traffic.py: create_wqs() is not the one of rdma-core 44")
open(path, "w").write(text.replace(old, new))
EOF
}

# patch_rndv FILE: with stag.loopback=0 every QP of stag0 is on the wire,
# where stag leaves a rendezvous to software (IBV_WC_TM_RNDV_INCOMPLETE,
# which test_tm_rndv does not handle): the test skips there, saying so.
patch_rndv()
{
	[ "$(cat /sys/module/stag/parameters/loopback 2>/dev/null)" = N ] || return 0
	$py - "$1" <<'EOF'
import sys

path = sys.argv[1]
text = open(path).read()
old = "    def test_tm_rndv(self):\n"
new = old + ("        if self.dev_name.startswith('stag'):\n"
             "            raise unittest.SkipTest('stag.loopback=0: on the wire stag "
             "leaves a rendezvous to software')\n")
if text.count(old) != 1:
    sys.exit("test_tag_matching.py: test_tm_rndv is not the one of rdma-core 44")
open(path, "w").write(text.replace(old, new))
EOF
}

# report LOG DOC: reads unittest's verbose output and prints
#   counts PASSED SKIPPED FAILED
#   failed ID			(FAIL, ERROR, unexpected success)
#   skipped ID REASON
#   undocumented ID REASON	(a skip DOC does not list)
#   stale PATTERN		(a row of DOC that matched no skip)
#   note TEXT
# IDs are module.Class.test, without the package name "tests.".
report()
{
	$py - "$1" "$2" <<'EOF'
import fnmatch, re, sys

log = open(sys.argv[1], errors="replace").read().splitlines()
try:
    doc = open(sys.argv[2]).read().splitlines()
except OSError:
    print("note cannot read", sys.argv[2])
    doc = []

def short(i):
    return i[len("tests."):] if i.startswith("tests.") else i

head = re.compile(r"^(\w+) \(([\w.]+)\)(?: \.\.\. (.*))?$")
outcome = re.compile(r"(?:^|\.\.\. )(ok|FAIL|ERROR|skipped .*|expected failure|unexpected success)$")
results, cur = {}, None
for line in log:
    m = head.match(line)
    if m:
        # Python 3.11 prints "test (pkg.mod.Class.test)", older ones "test (pkg.mod.Class)".
        cur = m.group(2) if m.group(2).endswith("." + m.group(1)) else m.group(2) + "." + m.group(1)
        cur = short(cur)
        # A test's own output may come between "..." and its outcome.
        o = outcome.search("... " + m.group(3)) if m.group(3) else None
        if o:
            results[cur] = o.group(1)
            cur = None
        continue
    m = outcome.search(line)
    if cur and m:
        results[cur] = m.group(1)
        cur = None

failed = set()
for line in log:
    m = re.match(r"^(FAIL|ERROR|UNEXPECTED SUCCESS): (\w+) \(([\w.]+)\)", line)
    if m:
        i = m.group(3)
        failed.add(short(i if i.endswith("." + m.group(2)) else i + "." + m.group(2)))
failed |= {i for i, r in results.items() if r in ("FAIL", "ERROR", "unexpected success")}
skipped = {i: r[len("skipped "):].strip("'\"") for i, r in results.items()
           if r.startswith("skipped")}

ran = [l for l in log if re.match(r"^Ran \d+ tests? in", l)]
if not ran:
    print("note the suite did not finish")
    if cur:
        print("note it was running", cur)
    total = len(results)
else:
    total = int(ran[-1].split()[1])
    m = re.search(r"skipped=(\d+)", "\n".join(log[-3:]))
    if m and int(m.group(1)) != len(skipped):
        print("note %s skips reported, %d attributed to a test" % (m.group(1), len(skipped)))
xfail = sum(1 for r in results.values() if r == "expected failure")
print("counts", total - len(failed) - len(skipped) - xfail, len(skipped), len(failed))
for i in sorted(failed):
    print("failed", i)

rows = []
for line in doc:
    m = re.match(r"^``(test_[^`]+)``\s+(\S.*)$", line)
    if m:
        rows.append(m.group(1))
used = set()
for i in sorted(skipped):
    print("skipped", i, skipped[i])
    hits = [p for p in rows if fnmatch.fnmatchcase(i, p)]
    used.update(hits)
    if not hits:
        print("undocumented", i, skipped[i])
if doc:
    for p in rows:
        if p not in used:
            print("stale", p)
EOF
}

# run DEV: the suite on DEV; its report in $tmp/DEV.report.
run()
{
	local d=$1 rc p s f

	LD_PRELOAD=$alloc timeout -k 10 "$limit" $py run_tests.py --dev "$d" -v >"$tmp/$d.log" 2>&1
	rc=$?
	report "$tmp/$d.log" "$skips" >"$tmp/$d.report" 2>&1 ||
		echo "note the report failed" >>"$tmp/$d.report"
	[ "$rc" -eq 124 ] && echo "note timed out after $limit s" >>"$tmp/$d.report"
	# Kept for a look after the run (vm/run --keep).
	[ -d "${STAG_OUT:-}" ] && cp "$tmp/$d.log" "$STAG_OUT/pyverbs-$d.log"
	# No process substitution: the guest has no /dev/fd.
	read -r p s f <<<"$(sed -n 's/^counts //p' "$tmp/$d.report")"
	echo "# pyverbs $d: ${p:-?} passed, ${s:-?} skipped, ${f:-?} failed (exit status $rc)"
	return 0
}

mkdir -p "$tmp/tests"
if ! cp -r "$src/." "$tmp/tests/" || ! gunzip -f "$tmp"/tests/*.gz ||
	! out=$(patch_base "$tmp/tests/base.py" 2>&1) ||
	! out=$(patch_rss "$tmp/tests/test_rss_traffic.py" 2>&1) ||
	! out=$(patch_rndv "$tmp/tests/test_tag_matching.py" 2>&1); then
	_t_report "not ok" "pyverbs on $dev has no failures" \
		"cannot prepare the suite from $src: $out"
	rm -rf "$tmp"
	exit 0
fi
cd "$tmp/tests" || exit 1

devs=("$dev")
[ -z "${STAG_TEST_DEV:-}" ] && [ "$dev" != rxe0 ] && [ -e /sys/class/infiniband/rxe0 ] &&
	[ "${STAG_PYVERBS_REF:-1}" != 0 ] && devs+=(rxe0)
# 2 MiB huge pages for the tests of huge-page regions and rings (the
# guest boots with none); given back after.
hp=/proc/sys/vm/nr_hugepages
hp_old=$(cat "$hp" 2>/dev/null)
if [ -n "$hp_old" ] && echo $((hp_old + 16)) >"$hp"; then
	echo "# $(cat "$hp") huge pages of 2 MiB for the suite"
else
	echo "# no huge pages for the suite: the huge-page tests will skip"
fi
for d in "${devs[@]}"; do
	run "$d"
done
[ -n "$hp_old" ] && echo "$hp_old" >"$hp"

r=$tmp/$dev.report
sed -n 's/^note /# /p' "$r"
if grep -q '^counts ' "$r" && ! grep -qE '^(failed |note (the suite did not finish|timed out))' "$r"; then
	_t_report ok "pyverbs on $dev has no failures" ""
else
	_t_report "not ok" "pyverbs on $dev has no failures" \
		"$(sed -n 's/^failed /failed: /p; s/^note //p' "$r")"
	# unittest's report of each failure, or the end of a run that did not finish.
	if grep -q '^Ran [0-9]* tests\? in' "$tmp/$dev.log"; then
		sed -n '/^======================================================================$/,/^Ran [0-9]* tests\? in/p' \
			"$tmp/$dev.log" | grep -v '^Ran ' | head -300 | sed 's/^/#   /'
	else
		tail -30 "$tmp/$dev.log" | sed 's/^/#   /'
	fi
fi

if grep -q '^undocumented ' "$r"; then
	_t_report "not ok" "every pyverbs skip on $dev is documented" \
		"not in ${skips#"$T_ROOT"/}:
$(sed -n 's/^undocumented //p' "$r")"
	# All of them, not only the first 20 of the verdict.
	sed -n 's/^undocumented /#   /p' "$r" | tail -n +20
else
	_t_report ok "every pyverbs skip on $dev is documented" ""
fi
sed -n 's/^stale \(.*\)/# documented, but no test skipped: \1/p' "$r"

cd / && rm -rf "$tmp"
