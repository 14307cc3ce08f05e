# SPDX-License-Identifier: GPL-2.0
#
# stag: out-of-tree build, provider, tests.
#
#   make                 build stag.ko against KDIR
#   make provider        build the libibverbs provider
#   make install         install module, provider and driver file on this host
#   make dkms-install    the module's source to /usr/src/stag-VERSION, built by DKMS
#   make deb             stag-dkms and libstag Debian packages (DEB_OUT=.)
#   make packages-check  DKMS and the packages installed in a guest (dkms.sh; ~30 min)
#   make demo            two guests on one link: data between them, a refused access, counters
#   make check           install what is needed, build, run every test
#   make kunit           run the KUnit suites (ARCH=um default, or x86_64)
#   make style           checkpatch over the tree
#   make bench           benchmarks against rdma_rxe
#   make hostile         the faulty-link, forged-packet and failing-peer suites at full size
#   make fuzz            the verbs fuzzer in a guest (SECONDS=600, SEED=1)

VM_KERNEL := tools/testing/vm/kernel
HOST_KDIR := /lib/modules/$(shell uname -r)/build
# A host with its own headers builds for itself; elsewhere the module is
# built for the Debian kernel the guests run.
KDIR ?= $(if $(wildcard $(HOST_KDIR)/Makefile),$(HOST_KDIR),$(shell $(VM_KERNEL) --kdir))
STAG_DIR := drivers/infiniband/sw/stag

PREFIX ?= /usr
DESTDIR ?=

.PHONY: all module provider tests install dkms-install deb packages-check vm-build demo check kunit style bench hostile fuzz clean

all: module provider

module:
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules

provider:
	$(MAKE) -C tools/provider

tests: provider
	$(MAKE) -C tools/testing/selftests

install: module provider
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules_install
	depmod -a
	$(MAKE) -C tools/provider install DESTDIR=$(DESTDIR)

# DKMS builds stag.ko for the running kernel (KERNELRELEASE=... for another)
# and again on every kernel upgrade.
dkms-install:
	tools/packaging/dkms-install

DEB_OUT ?= .
deb: provider
	tools/packaging/deb $(DEB_OUT)

# dkms.sh: make dkms-install, then make deb and apt install, each then a
# pingpong through the module DKMS built, in a guest of Debian's kernel.
# Its DKMS builds take their objects from what dkms-cache compiles here.
packages-check: vm-build
	tools/testing/vm/dkms-cache
	tools/testing/vm/run --append stag.loopback=0 --timeout 3600 \
		-- tools/testing/selftests/run dkms.sh

# Targets that run in the guest build the module for the guest's kernel,
# whatever the host has.
# KSERIES=6.1|7.2 builds it for that Debian kernel, outside the tree.
KSERIES ?= 6.12
vm-build:
	tools/testing/install-deps
	tools/testing/vm/build-module --series $(KSERIES) >/dev/null
	$(MAKE) provider tests

demo: vm-build
	tools/demo/run

check:
	tools/testing/check

kunit:
	tools/testing/kunit/run $(if $(ARCH),--arch=$(ARCH))

style:
	tools/testing/style

bench: vm-build
	tools/bench/run

hostile: vm-build
	tools/testing/hostile

# The verbs fuzzer for longer than make check runs it: make fuzz SECONDS=600 SEED=7
SECONDS ?= 600
SEED ?= 1
fuzz: vm-build
	tools/testing/vm/run --timeout $$(( $(SECONDS) + 600 )) \
		-- env STAG_FUZZ_SECONDS=$(SECONDS) STAG_FUZZ_SEED=$(SEED) \
		tools/testing/selftests/run fuzz.sh

clean:
	-$(MAKE) -C $(KDIR) M=$(CURDIR) clean
	$(MAKE) -C tools/provider clean
	$(MAKE) -C tools/testing/selftests clean
	$(MAKE) -C tools/bench clean
