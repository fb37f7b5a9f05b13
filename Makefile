# vdsql build. `make demo`, `make test` and `make pg-install` do their set-up themselves
# (scripts/install-deps, each with the packages it needs and no more).
#   make            build ./vdsql.so (the SQLite extension: `.load ./vdsql`)
#   make test       install every dependency, build, run every test (unit, SQL on files and
#                   HTTP, the same under ASan+UBSan, fuzz smoke)
#   make demo       install the build's and sqlite3's packages only, build, run the demo on
#                   generated datasets in demo/
#   make pg-install install PostgreSQL 15 and PGXS, build and install the PostgreSQL module
#   make mutants    plant each bug of tests/mutants/mutants.py in a copy, run the suites
#                   that must catch it (docs/testing.md); MUTANTS="name ..." for some
#   make bench      run the benchmarks in bench/ (bench/README.md)
#   make install    install the SQLite extension as $(PREFIX)/lib/vdsql.so (PREFIX=/usr:
#                   the loader's own directory, so `.load vdsql` works from any folder)
#   make B=build-asan SAN=address,undefined CC=clang   sanitized build into its own dir

CC      ?= cc
B       ?= build
SAN     ?=
PKGS    := libcurl libcjson zlib libcrypto hdf5
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null)
CFLAGS  ?= -O2 -g
CFLAGS  += -std=c11 -D_GNU_SOURCE -fPIC -Wall -Wextra -Werror -Wno-unused-parameter -Wno-missing-field-initializers \
           -fvisibility=hidden -Iext/core $(PKG_CFLAGS)
# gcc's -Wformat-truncation flags snprintf into fixed buffers that truncate on purpose;
# clang has no such warning and refuses the unknown flag under -Werror, so ask $(CC)
NO_FMT_TRUNC := $(shell $(CC) -Werror -Wno-format-truncation -x c -fsyntax-only /dev/null >/dev/null 2>&1 && echo -Wno-format-truncation)
CFLAGS  += $(NO_FMT_TRUNC)
ifneq ($(SAN),)
CFLAGS  += -fsanitize=$(SAN) -fno-omit-frame-pointer -fno-sanitize-recover=all
LDFLAGS += -fsanitize=$(SAN)
endif
LDLIBS  += $(PKG_LIBS) -lm

# What $(B) is built with: changing CC, SAN or CFLAGS for the same B rebuilds everything
# instead of mixing objects (gcc's ASan runtime, which `make test` preloads for
# build-asan, cannot run objects from clang's documented sanitizer build).
STAMP := $(B)/.build-flags
BUILD_FLAGS := $(CC) $(CFLAGS) $(LDFLAGS) $(LDLIBS)
ifneq ($(strip $(BUILD_FLAGS)),$(strip $(file <$(STAMP))))
$(shell mkdir -p $(B))
$(file >$(STAMP),$(BUILD_FLAGS))
endif

# Sources and headers at every depth of ext/core (formats/<format>/, relations/<group>/):
# a header edit anywhere rebuilds what may include it.
CORE_DIRS  := ext/core ext/core/* ext/core/*/*
CORE_SRC   := $(sort $(wildcard $(addsuffix /*.c,$(CORE_DIRS))))
CORE_HDR   := $(sort $(wildcard $(addsuffix /*.h,$(CORE_DIRS))))
SQLITE_SRC := $(sort $(wildcard ext/sqlite/*.c))
CORE_OBJ   := $(CORE_SRC:%.c=$(B)/%.o)
SQLITE_OBJ := $(SQLITE_SRC:%.c=$(B)/%.o)
UNIT_SRC   := $(sort $(wildcard tests/unit/t_*.c))
UNIT_BIN   := $(UNIT_SRC:tests/unit/%.c=$(B)/tests/%.t)
FUZZ_SRC   := $(sort $(wildcard tests/fuzz/fuzz_*.c))

.PHONY: all deps demo-deps pg-deps test demo demo-build bench fuzz sql clean install uninstall mutants vdsql-h5helper
all: vdsql.so vdsql-h5helper $(UNIT_BIN) sql $(B)/mkvtkhdf $(B)/storetool $(B)/azdrive

# scripts/install-deps's profiles: everything (test, bench), the build and the demo only,
# those and PostgreSQL's
deps:
	@scripts/install-deps test
demo-deps:
	@scripts/install-deps demo
pg-deps:
	@scripts/install-deps pg

# The top-level ./vdsql.so is the normal build; sanitized builds stay in $(B)/.
ifeq ($(B),build)
vdsql.so: $(B)/vdsql.so
	cp $< $@.tmp && mv -f $@.tmp $@  # a new file: shells that have the old one loaded keep running
else
vdsql.so: $(B)/vdsql.so
endif

# The HDF5 helper (formats/vtkhdf/vtkhdf_helper.h): found next to the module that
# spawns it, so it sits next to every vdsql.so (./, $(B)/, PostgreSQL's pkglibdir).
HELPER_SRC := $(sort $(wildcard ext/h5helper/*.c))
ifeq ($(B),build)
vdsql-h5helper: $(B)/vdsql-h5helper
	cp $< $@.tmp && mv -f $@.tmp $@
else
vdsql-h5helper: $(B)/vdsql-h5helper
endif
$(B)/vdsql-h5helper: $(HELPER_SRC) $(wildcard ext/h5helper/*.h) $(CORE_OBJ) $(STAMP)
	@echo "  LINK  $@"
	@$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $(HELPER_SRC) $(CORE_OBJ) $(LDLIBS)

# -z nodelete: the host (sqlite3) dlcloses extensions at exit; HDF5 keeps process-wide
# state and exit handlers, so the library must stay mapped until the process ends
# (otherwise LeakSanitizer's tracer crashes on the unmapped HDF5 at exit).
$(B)/vdsql.so: $(CORE_OBJ) $(SQLITE_OBJ)
	@echo "  LINK  $@"
	@$(CC) -shared -Wl,-z,nodelete $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(B)/%.o: %.c $(CORE_HDR) $(wildcard ext/sqlite/*.h) $(STAMP)
	@mkdir -p $(dir $@)
	@echo "  CC    $@"
	@$(CC) $(CFLAGS) -c -o $@ $<

$(B)/tests/%.t: tests/unit/%.c tests/unit/tap.h $(CORE_OBJ) $(STAMP)
	@mkdir -p $(dir $@)
	@echo "  LINK  $@"
	@$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(CORE_OBJ) $(LDLIBS)

# VTKHDF test-file generator (HDF5 C API), run by scripts/run-tests
$(B)/mkvtkhdf: tests/gen/mkvtkhdf.c $(STAMP)
	@mkdir -p $(dir $@)
	@echo "  LINK  $@"
	@$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(LDLIBS)

# The store interface on the command line, for the object-store suites (tests/store)
$(B)/storetool: tests/store/storetool.c $(CORE_OBJ) $(STAMP)
	@mkdir -p $(dir $@)
	@echo "  LINK  $@"
	@$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(CORE_OBJ) $(LDLIBS)

# Azure Blob test driver: one request signed by the core's Shared Key code over plain
# libcurl, for tests/store/azure_sign.t
$(B)/azdrive: tests/store/azdrive.c $(CORE_OBJ) $(STAMP)
	@mkdir -p $(dir $@)
	@echo "  LINK  $@"
	@$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(CORE_OBJ) $(LDLIBS)

# PostgreSQL install script, generated from the catalogue
VERSION := 0.1
sql: sql/vdsql--$(VERSION).sql
sql/vdsql--$(VERSION).sql: $(B)/gen_sql
	@$(B)/gen_sql $(VERSION) > $@
$(B)/gen_sql: ext/pg/gen_sql.c $(CORE_OBJ) $(STAMP)
	@echo "  LINK  $@"
	@$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(CORE_OBJ) $(LDLIBS)

# The PostgreSQL module (ext/pg/, PGXS): the core as a static archive, the glue built by
# PGXS with PostgreSQL's own flags, installed with vdsql.control and the generated script.
# Never touches ./vdsql.so.
.PHONY: pg pg-install
$(B)/libvdsql_core.a: $(CORE_OBJ)
	@echo "  AR    $@"
	@rm -f $@ && ar rcs $@ $^
# Another B (B=build-asan SAN=address,undefined) builds the module in $(B)/pg, out of the
# source folder; the server then needs the ASan runtime preloaded (docs/testing.md).
ifeq ($(B),build)
PGXS_MAKE = $(MAKE) --no-print-directory -C ext/pg -f Makefile.pgxs with_llvm=no autodepend=yes
else
PGXS_MAKE = mkdir -p $(B)/pg && $(MAKE) --no-print-directory -C $(B)/pg -f $(CURDIR)/ext/pg/Makefile.pgxs \
            SRC=$(CURDIR)/ext/pg VPATH= TOP=$(CURDIR) B=$(B) SAN=$(SAN) with_llvm=no autodepend=yes
endif
pg: $(B)/libvdsql_core.a sql
	@$(PGXS_MAKE)
# PostgreSQL's packages first, then the build in a new make, which reads pkg-config's flags
# once the packages are there
pg-install: pg-deps
	@$(MAKE) --no-print-directory pg $(B)/vdsql-h5helper
	@$(PGXS_MAKE) install
	install -m 0755 $(B)/vdsql-h5helper "$$($${PG_CONFIG:-pg_config} --pkglibdir)/vdsql-h5helper"

# libFuzzer targets (clang only), one per parser. The core is compiled once into
# build-fuzz/obj/ and linked into every target; UBSan findings abort (no recovery).
FUZZ_CFLAGS := -g -O1 -std=c11 -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
               $(PKG_CFLAGS) -Iext/core
FUZZ_OBJ   := $(CORE_SRC:%.c=build-fuzz/obj/%.o)
FUZZ_HDR   := $(CORE_HDR)
fuzz: $(FUZZ_SRC:tests/fuzz/%.c=build-fuzz/%)
$(FUZZ_OBJ): build-fuzz/obj/%.o: %.c $(FUZZ_HDR)
	@mkdir -p $(dir $@)
	clang $(FUZZ_CFLAGS) -c -o $@ $<
build-fuzz/%: tests/fuzz/%.c $(FUZZ_OBJ) $(FUZZ_HDR) $(wildcard tests/fuzz/*.h)
	@mkdir -p build-fuzz
	clang $(FUZZ_CFLAGS) -o $@ $< $(FUZZ_OBJ) $(PKG_LIBS) -lm

# demo, test and bench install what is missing first, then build in a new make: this
# make read pkg-config's flags when it started, before the packages were there.
test: deps
	@scripts/run-tests

# planted bugs (tests/mutants/mutants.py), each in a throw-away copy of HEAD: fails when
# a suite misses one. MUTANTS="name ..." runs those; MUTANTS_BUDGET=300 a bounded share
mutants:
	@scripts/mutants $(MUTANTS)

# The demo builds only what it runs (the extension, its HDF5 helper and the VTKHDF generator; `make test`
# builds the rest), on every core unless make was given -j: the first run on a fresh
# machine is mostly this compile.
JOBS ?= $(shell nproc 2>/dev/null || echo 1)
demo: demo-deps
	@$(MAKE) --no-print-directory $(if $(findstring jobserver,$(MAKEFLAGS)),,-j$(JOBS)) demo-build
	@scripts/demo
demo-build: vdsql.so vdsql-h5helper $(B)/mkvtkhdf
	@:

# OpenVDS and VTKHDF always; LINDI when LINDI_SRC names a lindi source tree (not in Debian)
bench: deps
	@$(MAKE) --no-print-directory all
	@bench/run
	@bench/vtkhdf
	@bench/vtkhdf_remote
	@bench/vds_http
	@bench/vds_audit
	@if [ -n "$$LINDI_SRC" ]; then bench/lindi && bench/lindi_refs; else echo "bench/lindi not run: set LINDI_SRC to a lindi source tree"; fi

PREFIX  ?= /usr
LIBDIR  ?= $(PREFIX)/lib
install: vdsql.so
	install -d $(DESTDIR)$(LIBDIR)
	install -m 0755 vdsql.so $(DESTDIR)$(LIBDIR)/vdsql.so
	install -m 0755 vdsql-h5helper $(DESTDIR)$(LIBDIR)/vdsql-h5helper
	@echo "installed $(DESTDIR)$(LIBDIR)/vdsql.so: in sqlite3, .load $(if $(filter /usr /usr/,$(PREFIX)),vdsql,$(LIBDIR)/vdsql)"

uninstall:
	rm -f $(DESTDIR)$(LIBDIR)/vdsql.so $(DESTDIR)$(LIBDIR)/vdsql-h5helper

clean:
	rm -rf build build-asan build-clang build-fuzz vdsql.so vdsql-h5helper sql/vdsql--*.sql
