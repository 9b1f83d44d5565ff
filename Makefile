# SPDX-License-Identifier: GPL-2.0-only
# dm-wbthrottle: writeback throttling as a device-mapper target.
#
#   make                 build for the running kernel (or KDIR=...)
#   make check           unit tests, builds for both Debian kernels, DKMS,
#                        VM tests on both kernels
#   make demo            the short "hdd" demonstration
#   make bench           the full benchmark (KVER= picks the kernel)

VERSION := $(shell sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' $(CURDIR)/dkms.conf)
KVER ?= $(shell uname -r)
KDIR ?= /lib/modules/$(KVER)/build
SRCS := dm-wbthrottle.c wbt_core.c wbt_core.h wbt_shim.h compat.h Kbuild dkms.conf

# Every installed Debian kernel with headers (6.1 and 6.12).
KVERS ?= $(notdir $(patsubst %/build,%,$(wildcard /lib/modules/6.1*-amd64/build)))

.PHONY: all module clean deps unit kbuild-all dkms-check vm-test check demo bench \
	sparse

all: module

module:
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules

clean:
	$(MAKE) -C $(KDIR) M=$(CURDIR) clean 2>/dev/null || true
	rm -rf build

deps:
	sh scripts/install-deps.sh

# Out-of-tree build for one kernel in its own directory: build/<kver>/
build/%/dm_wbthrottle.ko: $(SRCS)
	mkdir -p build/$*
	cp $(SRCS) build/$*/
	$(MAKE) -C /lib/modules/$*/build M=$(CURDIR)/build/$* W=1 modules

kbuild-all: $(foreach k,$(KVERS),build/$(k)/dm_wbthrottle.ko)
