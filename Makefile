# tpuctl: one make builds bin/tpuctl and bin/tpuctl-emulator.
#   make                       build
#   make check                 unit (Check) and end-to-end tests
#   make SANITIZE=address,undefined check
#   make check-san             unit + tests/e2e/san.txt under ASan+UBSan (CI)
#   make check-deep            all e2e under ASan+UBSan, valgrind, fiu; long fuzz
#   make lint                  clang-format, banned calls, mandoc, shellcheck
#   make fuzz                  libFuzzer targets, FUZZ_SECONDS each
#   make bench                 peer comparisons (tests/bench)
#   make report                reliability matrix (tests/reliability)
#   make install PREFIX=/usr/local

PREFIX ?= /usr/local
DESTDIR ?=
CC ?= cc
FUZZ_SECONDS ?= 20
SANITIZE ?=

PKGS = libcurl libcjson libssh2 libcrypto inih yaml-0.1
# bin/tpuctl links only these; libcurl, libssh2 and libcrypto are loaded
# on first use by src/dl*.c (see src/dl.h: start-up time).
TPUCTL_PKGS = libcjson inih yaml-0.1
EMU_PKGS = libmicrohttpd libcjson libcrypto

WARN = -std=c11 -Wall -Wextra -Werror -Wmissing-prototypes \
	-Wstrict-prototypes -Wwrite-strings -Wvla -Wformat=2 \
	-Wpointer-arith -fno-common
BASE_CFLAGS = -g -O2 -D_GNU_SOURCE $(WARN)

ifeq ($(SANITIZE),)
B = build/default
BIN = bin
SANFLAGS =
else
B = build/san
BIN = build/san/bin
SANFLAGS = -fsanitize=$(SANITIZE) -fno-sanitize-recover=all \
	-fno-omit-frame-pointer
endif

CFLAGS ?= $(BASE_CFLAGS)
ALL_CFLAGS = $(CFLAGS) $(SANFLAGS) -Isrc -Icmd \
	$(shell pkg-config --cflags $(PKGS) libmicrohttpd)
LIBS = $(shell pkg-config --libs $(PKGS)) -lpthread
TPUCTL_LIBS = $(shell pkg-config --libs $(TPUCTL_PKGS)) -lpthread
# src/ and cmd/ objects reach those three libraries through src/dl.h's
# tables; src/dl*.c themselves, the emulator, the unit tests and the fuzz
# targets are compiled without it and call the real functions.
DL_CFLAGS = -include src/dl.h
EMU_LIBS = $(shell pkg-config --libs $(EMU_PKGS)) -lpthread
CHECK_LIBS = $(shell pkg-config --libs check)

SRC_C = $(sort $(wildcard src/*.c))
CMD_C = $(sort $(wildcard cmd/*.c))
EMU_C = $(sort $(filter-out emulator/main.c,$(wildcard emulator/*.c)))
UNIT_C = $(sort $(wildcard tests/unit/check_*.c))

SRC_O = $(SRC_C:%.c=$(B)/%.o)
CMD_O = $(CMD_C:%.c=$(B)/%.o)
EMU_O = $(EMU_C:%.c=$(B)/%.o)
UNIT_BIN = $(UNIT_C:tests/unit/%.c=$(B)/tests/%)

LIB = $(B)/libtpuctl.a
EMULIB = $(B)/libemu.a
TPUCTL = $(BIN)/tpuctl
EMULATOR = $(if $(wildcard emulator/main.c),$(BIN)/tpuctl-emulator)

.PHONY: all check unit e2e lint fuzz bench install clean format check-format
all: $(TPUCTL) $(EMULATOR)

# tpuctl finds config/ (compat.json, recipes) at <bin>/../config, as in
# the source tree: give the sanitizer build's bin the same neighbours.
ifneq ($(SANITIZE),)
all: $(B)/config $(B)/man
$(B)/config:
	@mkdir -p $(B)
	ln -sfn ../../config $@
# ... and man/, where "--help" and "help COMMAND" find the pages.
$(B)/man:
	@mkdir -p $(B)
	ln -sfn ../../man $@
endif

$(B)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(OBJ_CFLAGS) -MMD -MP -c -o $@ $<

DL_O = $(filter $(B)/src/dl.o $(B)/src/dl_%.o,$(SRC_O))
$(filter-out $(DL_O),$(SRC_O)) $(CMD_O): OBJ_CFLAGS = $(DL_CFLAGS)
# (Also rebuilds objects compiled before the -include existed.)
$(filter-out $(DL_O),$(SRC_O)) $(CMD_O): src/dl.h

$(LIB): $(SRC_O)
	@mkdir -p $(dir $@)
	rm -f $@
	ar rcs $@ $^

$(EMULIB): $(EMU_O)
	@mkdir -p $(dir $@)
	rm -f $@
	ar rcs $@ $^ $(if $(EMU_O),,/dev/null)

$(TPUCTL): $(CMD_O) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(SANFLAGS) -o $@ $(CMD_O) $(LIB) $(TPUCTL_LIBS)

$(BIN)/tpuctl-emulator: $(B)/emulator/main.o $(EMULIB) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(SANFLAGS) -o $@ $(B)/emulator/main.o $(EMULIB) \
		$(LIB) $(EMU_LIBS) $(LIBS)

# Unit tests link libtpuctl.a; check_emu_* also link the emulator's objects.
$(B)/tests/check_emu_%: tests/unit/check_emu_%.c $(EMULIB) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Itests/unit -Iemulator -o $@ $< $(EMULIB) $(LIB) \
		$(CHECK_LIBS) $(EMU_LIBS) $(LIBS)

$(B)/tests/check_%: tests/unit/check_%.c $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Itests/unit -o $@ $< $(LIB) $(CHECK_LIBS) $(LIBS)

# Each check binary under a time limit (UNIT_TIMEOUT seconds, then KILL
# 10 s later), so a hang is named too; the last two lines name every
# one that failed and how, after the Check lines of its failures (at
# most 5 each), and count them (CI shows only the tail).
UNIT_TIMEOUT ?= 300
unit: $(UNIT_BIN)
	@pass=0; nfail=0; failed=; fl=; for t in $(UNIT_BIN); do \
		echo "== $$t"; \
		rc=0; \
		TPUCTL_TEST_SRCDIR=$(CURDIR) \
		    timeout -k 10 $(UNIT_TIMEOUT) $$t > $$t.log 2>&1 || rc=$$?; \
		cat $$t.log; \
		if [ $$rc -eq 0 ]; then pass=$$((pass + 1)); continue; fi; \
		fl="$$fl$$(grep -E '^[^ ]+:[0-9]+:[EF]:' $$t.log | head -5)\n"; \
		if [ $$rc -eq 124 ]; then \
			why="timed out after $(UNIT_TIMEOUT) s"; \
		elif [ $$rc -gt 128 ]; then \
			why="killed by signal $$((rc - 128))"; \
		else \
			why="exit $$rc"; \
		fi; \
		echo "== $$t: $$why"; \
		nfail=$$((nfail + 1)); \
		failed="$${failed:+$$failed, }$${t##*/} ($$why)"; \
	done; \
	[ -z "$$failed" ] || printf '%b' "$$fl"; \
	[ -z "$$failed" ] || echo "unit: FAILED: $$failed"; \
	echo "unit: $$pass passed, $$nfail failed"; \
	[ $$nfail -eq 0 ]

# E2E_JOBS tests at a time (tests/e2e/run.sh: its default from nproc;
# side by side only as root, each in a network namespace of its own).
e2e: all
	TPUCTL_BIN_DIR=$(CURDIR)/$(BIN) $(if $(E2E_JOBS),E2E_JOBS=$(E2E_JOBS)) \
	E2E_RESULTS=$${E2E_RESULTS:-$(CURDIR)/$(B)/e2e-results.txt} \
	tests/e2e/run.sh

check: all unit e2e

# The sanitizer pass of .ci/run: every unit test and the end-to-end tests
# of tests/e2e/san.txt (chosen to reach every command; san-coverage.sh
# checks) in the ASan+UBSan build, leaks fatal.
SAN_ENV = ASAN_OPTIONS=$${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1} \
	UBSAN_OPTIONS=$${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
.PHONY: check-san check-deep
check-san:
	sh tests/reliability/san-coverage.sh
	$(MAKE) SANITIZE=address,undefined all
	$(SAN_ENV) $(MAKE) SANITIZE=address,undefined unit
	$(SAN_ENV) E2E_SAN_ONLY=1 $(MAKE) SANITIZE=address,undefined e2e

# What CI leaves out for time: every end-to-end test under ASan+UBSan,
# the valgrind runs at full length (t279 with E2E_DEEP=1, G5), the whole
# suite with every tpuctl invocation under valgrind (G5, S12) and under
# fiu-run's random I/O failures (G2) (tests/e2e/run.sh E2E_WRAP: judged
# per invocation, closing "G5: N invocations, M bad", "G2: ..."), and
# each fuzz target for DEEP_FUZZ_SECONDS.  A test stops at its first
# failed command, so that each fiu pass (seed 1, 2, ...) reaches a
# different part of it: DEEP_FIU_SEEDS passes (RELIABILITY.md asks 20).
DEEP_FUZZ_SECONDS ?= 60
DEEP_FIU_SEEDS ?= 1
check-deep:
	$(MAKE) SANITIZE=address,undefined all
	$(SAN_ENV) $(MAKE) SANITIZE=address,undefined check
	$(MAKE) all
	E2E_DEEP=1 TESTS=t279 $(MAKE) e2e
	E2E_WRAP=valgrind $(MAKE) e2e
	for s in $$(seq 1 $(DEEP_FIU_SEEDS)); do \
		E2E_WRAP=fiu E2E_WRAP_SEED=$$s $(MAKE) e2e || exit 1; done
	$(MAKE) fuzz FUZZ_SECONDS=$(DEEP_FUZZ_SECONDS)

lint: check-format
	@echo "== banned calls"
	@! grep -nE '\<(sprintf|strcpy|strcat|strtok|gets|atoi|atol|system|popen|cJSON_GetErrorPtr)[[:space:]]*\(' \
		src/*.c src/*.h cmd/*.c cmd/*.h $(wildcard emulator/*.c emulator/*.h)
	@echo "== src/: ctx.c is the top layer, no other src/ file includes ctx.h"
	@! grep -n '#include "ctx.h"' $(filter-out src/ctx.c,$(wildcard src/*.c src/*.h))
	@echo "== emulator: its own request rules, no client validator"
	@! grep -nE $(EMU_FORBIDDEN) $(wildcard emulator/*.c emulator/*.h)
	@echo "== emulator: no object of the client's catalog or validators linked"
	@! nm $(EMULATOR) | grep -E ' [TtDdRrBb] (catalog_|tpuvalid_|gcs_url_|gcs_bucket_validate|gcs_object_validate)'
	@echo "== mandoc"
	mandoc -Tlint -Wwarning man/*.[15]
	@echo "== man pages render their quotes in pairs"
	scripts/check-man-render.sh man/*.[15]
	@echo "== shellcheck"
	shellcheck -x scripts/*.sh .ci/run tests/e2e/*.sh $(wildcard tests/bench/*.sh) \
		$(wildcard config/recipes/*.sh config/probes/*.sh tests/frameworks/*.sh) \
		tests/reliability/*.sh

# The emulator judges requests by emulator/validate.c and answers its
# TPU offering (zones, generations, accelerator types, runtimes) from
# emulator/offer.c, never from tpuctl's rules (a rule the client gets
# wrong must not pass twice): not gcsurl.h, tpuvalid.h or catalog.h.
lint: $(EMULATOR)
EMU_FORBIDDEN = '\#include "(gcsurl|tpuvalid|catalog)\.h"|\<(catalog_[a-z_]*validate[a-z_]*|catalog_labels_parse|gcs_bucket_validate|gcs_object_validate|gcs_pct_encode|gcs_url_parse|gcs_url_release|gcs_is_url|gcs_local_path|tpuvalid_[a-z_]+)[[:space:]]*\('

FORMAT_FILES = $(wildcard src/*.c src/*.h cmd/*.c cmd/*.h emulator/*.c \
	emulator/*.h tests/unit/*.c tests/unit/*.h tests/fuzz/*.c)
check-format:
	@echo "== clang-format"
	clang-format --dry-run -Werror $(FORMAT_FILES)

format:
	clang-format -i $(FORMAT_FILES)

FUZZ_C = $(sort $(wildcard tests/fuzz/fuzz_*.c))
FUZZ_BIN = $(FUZZ_C:tests/fuzz/%.c=build/fuzz/%)
# src/ and emulator/ are compiled once for every target (coverage
# instrumentation without libFuzzer's main: fuzzer-no-link), into two
# archives each target links.
FUZZ_CFLAGS = $(BASE_CFLAGS) -O1 -fno-sanitize-recover=all -Isrc -Iemulator \
	$(shell pkg-config --cflags $(PKGS) libmicrohttpd)
FUZZ_SRC_O = $(SRC_C:%.c=build/fuzz/obj/%.o)
FUZZ_EMU_O = $(EMU_C:%.c=build/fuzz/obj/%.o)
build/fuzz/obj/%.o: %.c
	@mkdir -p $(dir $@)
	clang $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link,address,undefined \
		-MMD -MP -c -o $@ $<
build/fuzz/libtpuctl.a: $(FUZZ_SRC_O)
	rm -f $@
	ar rcs $@ $^
build/fuzz/libemu.a: $(FUZZ_EMU_O)
	rm -f $@
	ar rcs $@ $^ $(if $(FUZZ_EMU_O),,/dev/null)
build/fuzz/%: tests/fuzz/%.c build/fuzz/libtpuctl.a build/fuzz/libemu.a
	@mkdir -p $(dir $@)
	clang $(FUZZ_CFLAGS) -fsanitize=fuzzer,address,undefined -o $@ $< \
		$(if $(findstring fuzz_emu_,$@),build/fuzz/libemu.a) \
		build/fuzz/libtpuctl.a $(LIBS) $(EMU_LIBS)

# RELIABILITY.md S12 (no crash or UB on hostile input): every target
# under ASan+UBSan, FUZZ_SECONDS each (CI 8, make check-deep 60),
# FUZZ_JOBS at a time; a crashing target's log is printed at the end.
FUZZ_JOBS ?= 2
fuzz: $(FUZZ_BIN)
	@rm -f build/fuzz/*.failed
	@printf '%s\n' $(FUZZ_BIN) | xargs -P $(FUZZ_JOBS) -n 1 sh -c ' \
		f=$$1; n=$$(basename $$f); corpus=tests/fuzz/corpus/$$n; \
		mkdir -p build/fuzz/corpus/$$n $$corpus; \
		dict=; [ -f tests/fuzz/$$n.dict ] && dict=-dict=tests/fuzz/$$n.dict; \
		echo "== $$n ($(FUZZ_SECONDS) s)"; \
		$$f $$dict -max_total_time=$(FUZZ_SECONDS) -print_final_stats=0 \
			build/fuzz/corpus/$$n $$corpus 2>build/fuzz/$$n.log || \
			{ echo "FAIL $$n"; touch build/fuzz/$$n.failed; }' sh
	@fail=0; for f in $(FUZZ_BIN); do \
		[ -f $$f.failed ] || continue; \
		echo "== $$(basename $$f) crashed:"; tail -50 $$f.log; fail=1; \
	done; \
	[ $$fail = 0 ] || exit 1; \
	echo "fuzz (S12): $(words $(FUZZ_BIN)) targets, $(FUZZ_SECONDS) s each, no crash"

bench: all
	TPUCTL_BIN_DIR=$(CURDIR)/$(BIN) tests/bench/run.sh

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 \
		$(DESTDIR)$(PREFIX)/share/man/man5 \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions \
		$(DESTDIR)$(PREFIX)/share/zsh/site-functions
	install -m 755 $(TPUCTL) $(EMULATOR) $(DESTDIR)$(PREFIX)/bin/
	install -m 644 man/*.1 $(DESTDIR)$(PREFIX)/share/man/man1/
	install -m 644 man/*.5 $(DESTDIR)$(PREFIX)/share/man/man5/
	install -d $(DESTDIR)$(PREFIX)/share/tpuctl/recipes \
		$(DESTDIR)$(PREFIX)/share/tpuctl/probes
	install -m 644 config/compat.json $(DESTDIR)$(PREFIX)/share/tpuctl/
	install -m 644 config/recipes/*.sh $(DESTDIR)$(PREFIX)/share/tpuctl/recipes/
	install -m 644 config/probes/* $(DESTDIR)$(PREFIX)/share/tpuctl/probes/
	$(TPUCTL) completion bash > \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions/tpuctl
	$(TPUCTL) completion zsh > \
		$(DESTDIR)$(PREFIX)/share/zsh/site-functions/_tpuctl

# the reliability matrix: which test covers each RELIABILITY.md row
.PHONY: report
report:
	sh tests/reliability/report.sh

clean:
	rm -rf build bin

-include $(shell find build -name '*.d' 2>/dev/null)
