# SPDX-License-Identifier: GPL-2.0-only
# dm-wbthrottle: writeback throttling as a device-mapper target.
#
#   make                  build for the running kernel (or KDIR=..., KVER=...)
#   make install          install with DKMS (make uninstall removes it)
#   make check            everything CI runs: deps, unit tests, W=1 + sparse
#                         builds for both Debian kernels, DKMS, VM tests
#   make demo             the short "hdd" demonstration
#   make bench            the full benchmark (KVER= picks the kernel)
#   make fstests          fstests' CI selection over wbthrottle and dm-linear,
#                         both kernels, xfs and ext4 (part of make check)
#   make fstests-quick    fstests' whole quick group (hours; opt-in)

NAME := dm-wbthrottle
VERSION := $(shell sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' $(CURDIR)/dkms.conf)
KVER ?= $(shell uname -r)
KDIR ?= /lib/modules/$(KVER)/build
# The files DKMS ships and Kbuild needs.
SRCS := dm-wbthrottle.c wbt_core.c wbt_core.h wbt_shim.h compat.h \
	dm_wbthrottle_trace.h Kbuild dkms.conf

# Every installed Debian kernel with headers (6.1 and 6.12).
KVERS ?= $(sort $(notdir $(patsubst %/build,%,$(wildcard /lib/modules/6.*-amd64/build))))

.PHONY: all module clean deps dist-files install uninstall unit fuzz style kbuild-all diskmodel-all \
	dkms-check vm-test check demo bench fstests fstests-deps fstests-quick

all: module

module:
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules

clean:
	-$(MAKE) -C $(KDIR) M=$(CURDIR) clean 2>/dev/null
	-$(MAKE) -C tests/unit clean
	-$(MAKE) -C tests/fuzz clean
	rm -rf build

deps:
	sh scripts/install-deps.sh

dist-files:
	@printf '%s\n' $(SRCS)

install:
	rm -rf /usr/src/$(NAME)-$(VERSION)
	mkdir -p /usr/src/$(NAME)-$(VERSION)
	cp $(SRCS) /usr/src/$(NAME)-$(VERSION)/
	dkms add -m $(NAME) -v $(VERSION)
	dkms build -m $(NAME) -v $(VERSION) -k $(KVER)
	dkms install -m $(NAME) -v $(VERSION) -k $(KVER)

uninstall:
	-dkms remove -m $(NAME) -v $(VERSION) --all
	rm -rf /usr/src/$(NAME)-$(VERSION)

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

# checkpatch --strict (fetches the script from linux-source-6.12 once)
style:
	sh scripts/checkpatch.sh

dkms-check:
	sh scripts/dkms-check.sh $(KVERS)

# One VM per kernel, side by side; each line of output names its kernel.
vm-test: kbuild-all diskmodel-all
	@pids=; for k in $(KVERS); do bash tests/vm/run.sh -k $$k & pids="$$pids $$!"; done; \
	rc=0; for p in $$pids; do wait $$p || rc=1; done; exit $$rc

# fstests (tests/fstests/README.md), built from the pinned source tarball
# FSTESTS_TARBALL (default ../shared/fstests/fstests-*.tar.xz beside the
# repository). FSTESTS_SEL the selection (ci, extended; tests/fstests/*.list),
# FSTESTS_FS the filesystems, KVERS the kernels;
# FSTESTS_RECORD=1 copies the summaries to tests/fstests/results/.
FSTESTS_FS ?= xfs ext4
FSTESTS_SEL ?= ci
FSTESTS_ARGS = -f "$(FSTESTS_FS)" $(foreach k,$(KVERS),-k $(k)) \
	$(if $(FSTESTS_RECORD),-r)

fstests-deps: deps
	sh tests/fstests/install-deps.sh

# Both kernels side by side, one QEMU each.
fstests: fstests-deps kbuild-all
	bash tests/fstests/run.sh -p -s $(FSTESTS_SEL) $(FSTESTS_ARGS)

# fstests' quick group; dm-linear runs what failed over wbthrottle.
fstests-quick: fstests-deps kbuild-all
	bash tests/fstests/run.sh -s quick $(FSTESTS_ARGS)

check: deps
	$(MAKE) unit
	$(MAKE) fuzz
	$(MAKE) kbuild-all
	$(MAKE) dkms-check
	$(MAKE) vm-test
	$(MAKE) fstests
	@echo "make check: all passed"

demo: deps
	bash tests/bench/demo.sh

bench: deps
	bash tests/bench/bench.sh
