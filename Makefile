# SPDX-License-Identifier: GPL-2.0-only
# dm-wbthrottle: writeback throttling as a device-mapper target.
#
#   make                  build for the running kernel (or KDIR=..., KVER=...)
#   make install          the module with DKMS, the wbthrottle command, its
#                         generator and man pages (again: replaces them;
#                         make uninstall removes them)
#   make tools            build build/tools/wbthrottle
#   make deb              the Debian packages, in build/deb/
#   make lint             checkpatch, shellcheck and pyflakes over the tree
#   make check            deps, lint, unit tests, W=1 + sparse builds for
#                         both Debian kernels, DKMS, packages, VM tests
#   make demo             the short "hdd" demonstration
#   make bench            the full benchmark (KVER= picks the kernel)
#   make bench-pushback   fsync and reader cost over four disk profiles
#   make bench-cpu        what the target costs where nothing is throttled
#   make fstests          fstests' CI selection over wbthrottle and dm-linear,
#                         both kernels, xfs and ext4 (CI runs it after
#                         make check: .ci/run)
#   make fstests-quick    fstests' whole quick group (hours; opt-in)
#   make fstests-quick-batch  the next batch of it, on one kernel and fs

NAME := dm-wbthrottle
VERSION := $(shell sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' $(CURDIR)/dkms.conf)
KVER ?= $(shell uname -r)
KDIR ?= /lib/modules/$(KVER)/build
# The files DKMS ships and Kbuild needs.
SRCS := dm-wbthrottle.c wbt_core.c wbt_core.h wbt_names.h wbt_shim.h compat.h \
	dm_wbthrottle_trace.h Kbuild dkms.conf

# Guard on one kernel's whole VM run, in seconds (run.sh's default is
# 1200): with 24 tests, a run that shared the host with two benchmark
# guests was still at its 13th test after 20 minutes.
VM_TIMEOUT ?= 2700

# Every installed Debian kernel with headers (6.1 and 6.12).
KVERS ?= $(sort $(notdir $(patsubst %/build,%,$(wildcard /lib/modules/6.*-amd64/build))))
# Overridable so scripts/dkms-check.sh can install into private trees.
DKMS ?= dkms
DKMS_SRC ?= /usr/src

.PHONY: all module clean deps dist-files install uninstall install-dkms uninstall-dkms \
	tools tools-test initramfs-check version-check deb deb-check unit fuzz style lint \
	kbuild-all diskmodel-all dkms-check vm-test check demo bench bench-pushback bench-cpu \
	fstests fstests-deps fstests-quick fstests-quick-batch fstests-selftest \
	bench-selftest

all: module

module:
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules

clean:
	-$(MAKE) -C $(KDIR) M=$(CURDIR) clean 2>/dev/null
	-$(MAKE) -C tests/unit clean
	-$(MAKE) -C tests/fuzz clean
	-$(MAKE) -C tools clean
	rm -rf build

deps:
	sh scripts/install-deps.sh

dist-files:
	@printf '%s\n' $(SRCS)

install: install-dkms
	$(MAKE) -C tools install

uninstall: uninstall-dkms
	$(MAKE) -C tools uninstall

# Idempotent: a second install replaces the sources and rebuilds for KVER,
# leaving the builds for other kernels alone.
install-dkms:
	rm -rf $(DKMS_SRC)/$(NAME)-$(VERSION)
	mkdir -p $(DKMS_SRC)/$(NAME)-$(VERSION)
	cp $(SRCS) $(DKMS_SRC)/$(NAME)-$(VERSION)/
	-$(DKMS) remove -m $(NAME) -v $(VERSION) -k $(KVER) >/dev/null 2>&1
	$(DKMS) status -m $(NAME) -v $(VERSION) | grep -q . || \
		$(DKMS) add -m $(NAME) -v $(VERSION)
	$(DKMS) build -m $(NAME) -v $(VERSION) -k $(KVER)
	$(DKMS) install -m $(NAME) -v $(VERSION) -k $(KVER)

uninstall-dkms:
	if $(DKMS) status -m $(NAME) -v $(VERSION) | grep -q .; then \
		$(DKMS) remove -m $(NAME) -v $(VERSION) --all; fi
	rm -rf $(DKMS_SRC)/$(NAME)-$(VERSION)

# The command, with -Wall -Wextra -Werror, and its unit tests.
tools:
	$(MAKE) -C tools all

tools-test:
	$(MAKE) -C tools test

initramfs-check:
	$(MAKE) -C tools initramfs-check

version-check:
	sh scripts/version-check.sh

# Both .debs from a copy of the tree (dpkg-buildpackage writes to ..).
deb:
	sh scripts/deb-check.sh --build-only

deb-check:
	sh scripts/deb-check.sh

# Out-of-tree build for one kernel in its own directory, build/<kver>/,
# with W=1 and sparse; any warning fails the build.
build/%/dm_wbthrottle.ko: $(SRCS)
	@mkdir -p build/$*
	@cp $(SRCS) build/$*/
	@$(MAKE) -s -C /lib/modules/$*/build M=$(CURDIR)/build/$* W=1 C=2 \
		modules > build/$*/build.log 2>&1 || { cat build/$*/build.log; exit 1; }
	@if grep -E 'warning:|error:' build/$*/build.log; then \
		echo "build for $* has warnings"; rm -f $@; exit 1; fi
	@echo "built $@ (W=1, sparse: no warnings)"

kbuild-all: $(foreach k,$(KVERS),build/$(k)/dm_wbthrottle.ko)

# The test-only disk model (tests/diskmodel), for the VM tests and the bench.
diskmodel-all:
	@$(MAKE) -s --no-print-directory -C tests/diskmodel all-kernels KVERS="$(KVERS)"

unit:
	$(MAKE) -C tests/unit run

fuzz:
	$(MAKE) -C tests/fuzz run

# checkpatch --strict over all kernel C (fetches the script from
# linux-source-6.12 once)
style:
	sh scripts/checkpatch.sh

# style, plus shellcheck over every shell script and pyflakes over every
# Python script
lint:
	sh scripts/lint.sh

dkms-check:
	sh scripts/dkms-check.sh $(KVERS)

# One VM per kernel, side by side; each line of output names its kernel.
# What failed (and the first oops, if any) is repeated at the end.
vm-test: kbuild-all diskmodel-all tools
	@pids=; for k in $(KVERS); do rm -f build/vm-out/$$k/failure; \
	bash tests/vm/run.sh -k $$k -t $(VM_TIMEOUT) & pids="$$pids $$!"; done; \
	rc=0; for p in $$pids; do wait $$p || rc=1; done; \
	[ $$rc = 0 ] || { echo "vm-test: what failed:"; \
	for k in $(KVERS); do cat build/vm-out/$$k/failure 2>/dev/null; done; }; \
	exit $$rc

# fstests (tests/fstests/README.md), built from the pinned source tarball
# FSTESTS_TARBALL (default shared/fstests/fstests-*.tar.xz beside the
# repository or a directory above it). FSTESTS_SEL the selection (ci,
# extended; tests/fstests/*.list), FSTESTS_FS the filesystems, KVERS the
# kernels;
# FSTESTS_RECORD=1 copies the summaries to tests/fstests/results/.
FSTESTS_FS ?= xfs ext4
FSTESTS_SEL ?= ci
FSTESTS_ARGS = -f "$(FSTESTS_FS)" $(foreach k,$(KVERS),-k $(k)) \
	$(if $(FSTESTS_RECORD),-r)

# The harness's own verdict logic (results.py, summarize.py, ledger.py),
# on made-up runs; seconds, no VM.
fstests-selftest:
	python3 tests/fstests/selftest.py

bench-selftest:
	python3 tests/bench/selftest.py

fstests-deps: deps
	sh tests/fstests/install-deps.sh

# Both kernels side by side, one QEMU each. Not part of check, which is
# kept under 30 minutes: .ci/run runs it after check.
# The selection over both targets in full (-C): the control beside it.
fstests: fstests-deps kbuild-all
	bash tests/fstests/run.sh -p -C -s $(FSTESTS_SEL) $(FSTESTS_ARGS)

# fstests' quick group; dm-linear runs what failed over wbthrottle.
fstests-quick: fstests-deps kbuild-all
	bash tests/fstests/run.sh -s quick $(FSTESTS_ARGS)

# One batch of the quick group, resumed from its ledger in
# tests/fstests/results/ (tests/fstests/README.md): on the newest kernel
# of KVERS and the first of FSTESTS_FS, unless they name one.
fstests-quick-batch: fstests-deps kbuild-all
	bash tests/fstests/run.sh -R -s quick -k $(lastword $(KVERS)) \
		-f $(firstword $(FSTESTS_FS)) $(if $(FSTESTS_RECORD),-r)

check: deps
	$(MAKE) version-check
	$(MAKE) lint
	$(MAKE) unit
	$(MAKE) tools-test
	$(MAKE) fstests-selftest
	$(MAKE) bench-selftest
	$(MAKE) initramfs-check
	$(MAKE) fuzz
	$(MAKE) kbuild-all
	$(MAKE) dkms-check
	$(MAKE) deb-check
	$(MAKE) vm-test
	@echo "make check: all passed"

demo: deps
	bash tests/bench/demo.sh

bench: deps
	bash tests/bench/bench.sh

bench-pushback: deps
	bash tests/bench/pushback.sh

bench-cpu: deps
	bash tests/bench/cpucost.sh
