# attnbench — build, benchmark and test attention variants on NVIDIA GPUs.
# `make help` lists every target and variable. Project flags live in MK_*;
# your CFLAGS / NVCCFLAGS / LDFLAGS are appended after them.

SHELL := /bin/bash
.DEFAULT_GOAL := all

# ------------------------------------------------------------ user values
# The values and paths a user hands to the recipes (make bench OUT=...,
# make baseline REASON="..."). Each is taken as written: make does not
# expand a $(...) or ${...} in it, a recipe passes it to the shell quoted
# ($(call shq,...)), free text (REASON) only through the environment; and
# each is exported as given, as make does for any variable of the command
# line.
USER_VALUES := GRID VARIANTS MODE WARM_MS OUT PEAK RESUME FORCE ROW_TIMEOUT TRACE_GRID TRACE_DIR SUSTAIN INIT PASS REF \
               RESULTS BASELINE THRESHOLDS GPU MARKDOWN AB_RUN TREND REASON BASE CAND SLOWDOWN \
               BLOCK_MS BUDGET_MS GPUS PEERS PEER_VARIANTS SHARDS PARTITION ACCOUNT MAX_PARALLEL \
               GRES SBATCH_ARGS PLOT_DIR SUITES FUZZ_SECONDS GIT_REV
$(foreach v,$(USER_VALUES),$(if $(filter command line environment environment override,$(origin $(v))),\
  $(eval override $(v) := $$(value $(v)))$(eval export $(v))))
# shq TEXT: TEXT as one single-quoted shell word
shq = '$(subst ','\'',$(1))'
# opt OPTION,VALUE: "OPTION 'VALUE'" when VALUE is set, else nothing
opt = $(if $(2),$(1) $(call shq,$(2)))

# ---------------------------------------------------------------- detection
# nvcc: NVCC=, else nvcc on PATH, else $(CUDA_HOME)/bin/nvcc (CUDA_HOME
# default /usr/local/cuda). Only what builds CUDA code needs it: help,
# clean, the deps targets, plots, report, figures and the fuzz targets
# work without.
NVCC_FREE_GOALS := help clean deps check-deps plot-deps figure-deps browser-deps fuzz-deps slurm-deps \
                   plots report figures fuzz fuzz-build
ifeq ($(origin NVCC),undefined)
NVCC := $(or $(shell command -v nvcc 2>/dev/null),$(wildcard $(or $(CUDA_HOME),/usr/local/cuda)/bin/nvcc))
else ifeq ($(shell command -v '$(NVCC)' 2>/dev/null),)
NVCC_NOT_RUNNABLE := $(NVCC)
NVCC :=
endif
ifeq ($(NVCC),)
ifneq ($(filter-out $(NVCC_FREE_GOALS),$(or $(MAKECMDGOALS),all)),)
$(error make $(or $(MAKECMDGOALS),all) needs the CUDA toolkit (nvcc), and $(if $(NVCC_NOT_RUNNABLE),NVCC=$(NVCC_NOT_RUNNABLE) is not a program,no nvcc is on PATH nor in $(or $(CUDA_HOME),/usr/local/cuda)/bin): install it, or point NVCC=/path/to/cuda/bin/nvcc at it)
endif
$(info ✗ nvcc not found: only $(NVCC_FREE_GOALS) work without it (NVCC=/path/to/nvcc))
else
CUDA_HOME ?= $(patsubst %/bin/nvcc,%,$(NVCC))
$(info ✓ nvcc: $(NVCC) ($(shell $(NVCC) --version | sed -n 's/.*release \([0-9.]*\).*/\1/p')))
endif

# CUDA_ARCH: the device's compute capability when nvidia-smi sees one, else 90
# (Hopper) so that a CPU-only machine still compiles everything.
CUDA_ARCH ?= $(shell nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n1 | tr -d ' .')
ifeq ($(CUDA_ARCH),)
CUDA_ARCH := 90
$(info ✗ no GPU seen by nvidia-smi: building for sm_$(CUDA_ARCH) (set CUDA_ARCH= to change))
else
$(info ✓ GPU compute capability: sm_$(CUDA_ARCH))
endif

CUPTI_INC := $(firstword $(wildcard $(CUDA_HOME)/extras/CUPTI/include/cupti.h $(CUDA_HOME)/include/cupti.h))
ifneq ($(CUPTI_INC),)
$(info ✓ CUPTI: $(CUPTI_INC) (built-in tracer on))
else
$(info ✗ CUPTI not found: tracer off, op-count columns left empty, `make trace` unavailable)
endif

CUDNN_INC := $(firstword $(wildcard /usr/include/x86_64-linux-gnu/cudnn_version.h /usr/include/cudnn_version.h $(CUDA_HOME)/include/cudnn_version.h))
# cudnn_sdpa (variants/cudnn_sdpa.c) needs cuDNN >= 9 (cudnn_graph.h) and libcudnn.so.
CUDNN_LIB := $(firstword $(wildcard $(CUDA_HOME)/lib64/libcudnn.so /usr/lib/x86_64-linux-gnu/libcudnn.so /usr/lib64/libcudnn.so /usr/lib/libcudnn.so))
HAVE_CUDNN :=
ifneq ($(CUDNN_INC),)
CUDNN_VERSION := $(shell grep -E 'define CUDNN_(MAJOR|MINOR|PATCHLEVEL) ' $(CUDNN_INC) | awk '{print $$3}' | paste -sd.)
ifeq ($(filter-out 0 1 2 3 4 5 6 7 8,$(firstword $(subst ., ,$(CUDNN_VERSION)))),)
$(info ✗ cuDNN $(CUDNN_VERSION) at $(CUDNN_INC): cudnn_sdpa needs 9.0 or newer, left out)
else ifeq ($(wildcard $(dir $(CUDNN_INC))cudnn_graph.h),)
$(info ✗ cuDNN $(CUDNN_VERSION): no cudnn_graph.h beside $(CUDNN_INC): cudnn_sdpa left out)
else ifeq ($(CUDNN_LIB),)
$(info ✗ cuDNN $(CUDNN_VERSION) headers but no libcudnn.so: cudnn_sdpa left out)
else
HAVE_CUDNN := yes
$(info ✓ cuDNN: $(CUDNN_INC) ($(CUDNN_VERSION)), $(CUDNN_LIB): cudnn_sdpa built)
endif
else
$(info ✗ cuDNN not found: cudnn_sdpa left out)
endif

# zlib: the samples files are gzipped (common/results.c writes, results_read.c reads)
HAVE_ZLIB := $(shell pkg-config --exists zlib 2>/dev/null && echo yes)
ifeq ($(HAVE_ZLIB),yes)
$(info ✓ zlib: $(shell pkg-config --modversion zlib))
else
$(info ✗ zlib not found: the host code needs it (Debian: zlib1g-dev; `make test` installs it as root))
endif

HAVE_CHECK := $(shell pkg-config --exists check 2>/dev/null && echo yes)
ifeq ($(HAVE_CHECK),yes)
$(info ✓ Check: $(shell pkg-config --modversion check))
else
$(info ✗ Check not found: `make test` installs it (apt-get, as root) or says what is missing)
endif

# ------------------------------------------------------------------- flags
BUILD    := build
ifeq ($(origin GIT_REV),undefined)
GIT_REV  := $(shell git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)$(shell git diff --quiet HEAD -- 2>/dev/null || echo -dirty)
endif
MK_CFLAGS    := -std=c11 -O2 -g -D_GNU_SOURCE -Wall -Wextra -I$(CUDA_HOME)/include
MK_NVCCFLAGS := -std=c++17 -O3 -g -lineinfo -gencode=arch=compute_$(CUDA_ARCH),code=sm_$(CUDA_ARCH) \
                -Xcompiler -Wall,-Wextra -Werror all-warnings
MK_LDFLAGS   := -L$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib64
MK_LDLIBS    := -lcublas -lcudart -lstdc++ -ldl -lm -lz
ifneq ($(CUPTI_INC),)
MK_CFLAGS += -DATTN_HAVE_CUPTI
MK_LDLIBS += -lcupti
endif
ifeq ($(HAVE_CUDNN),yes)
CUDNN_LIBDIR := $(patsubst %/,%,$(dir $(CUDNN_LIB)))
MK_CFLAGS += -DATTN_HAVE_CUDNN $(patsubst %,-I%,$(filter-out $(CUDA_HOME)/include,$(patsubst %/,%,$(dir $(CUDNN_INC)))))
MK_LDLIBS += -lcudnn
ifeq ($(filter $(CUDNN_LIBDIR),$(CUDA_HOME)/lib64 /usr/lib/x86_64-linux-gnu /usr/lib64 /usr/lib),)
MK_LDFLAGS += -L$(CUDNN_LIBDIR) -Wl,-rpath,$(CUDNN_LIBDIR)
endif
endif
# SANITIZE=1: the host code under AddressSanitizer and UBSan (make test-sanitize)
ifeq ($(SANITIZE),1)
MK_CFLAGS += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
MK_LDFLAGS += -fsanitize=address,undefined
endif
ifeq ($(WERROR),1)
MK_CFLAGS += -Werror
MK_NVCCFLAGS += -Xcompiler -Werror
endif
ALL_CFLAGS    = $(MK_CFLAGS) $(CFLAGS)
ALL_NVCCFLAGS = $(MK_NVCCFLAGS) $(NVCCFLAGS)
ALL_LDFLAGS   = $(MK_LDFLAGS) $(LDFLAGS)

# ----------------------------------------------------------------- sources
COMMON_C  := $(wildcard common/*.c)
COMMON_CU := $(wildcard common/*.cu)
VARIANT_SRCS := $(wildcard variants/*.cu)
VARIANT_C := $(filter-out $(if $(HAVE_CUDNN),,variants/cudnn_sdpa.c),$(wildcard variants/*.c))
LIB_OBJS  := $(COMMON_C:%.c=$(BUILD)/%.o) $(COMMON_CU:%.cu=$(BUILD)/%.o) $(VARIANT_SRCS:%.cu=$(BUILD)/%.o) \
             $(VARIANT_C:%.c=$(BUILD)/%.o)
BENCH_LIB := $(BUILD)/bench/options.o $(BUILD)/bench/gate/gate.o $(BUILD)/bench/gate/shift.o $(BUILD)/bench/resume.o $(BUILD)/bench/supervise.o \
             $(BUILD)/bench/scale/shard.o

ATTNBENCH := $(BUILD)/attnbench
# attnbench with the test-only variants of tests/variants/ (a kernel that never
# ends, for the watchdog's GPU test); never installed or run by make bench
ATTNBENCH_TEST := $(BUILD)/attnbench-test
AB_TEST   := $(BUILD)/ab-test
TEST_VARIANT_OBJS := $(patsubst %.cu,$(BUILD)/%.o,$(wildcard tests/variants/*.cu))
TEST_CPU  := $(BUILD)/test_cpu
TEST_GPU  := $(BUILD)/test_gpu
TEST_TRACE := $(BUILD)/test_trace
TEST_REGRESS := $(BUILD)/test_regress
TEST_PLOTS := $(BUILD)/test_plots
TEST_SHIFT := $(BUILD)/test_shift
TEST_AB   := $(BUILD)/test_ab
TEST_WATCHDOG := $(BUILD)/test_watchdog
TEST_SHARD := $(BUILD)/test_shard
REGRESS   := $(BUILD)/regress
AB        := $(BUILD)/ab
REPORT    := $(BUILD)/report
MERGE     := $(BUILD)/merge
# The PyTorch peers' runner (tools/peers/), through ctypes: attnbench's own
# sweep (bench/attnbench.c and all it uses) as a shared library with no
# built-in variants, no CUPTI and no cuDNN (PyTorch loads its own), built
# position-independent in build/pic/; the peers add themselves at run time.
PEER_LIB  := $(BUILD)/libattnpeer.so
PIC_BUILD := $(BUILD)/pic
PEER_C    := bench/peer_api.c bench/attnbench.c bench/runner.c bench/gate/worker.c bench/options.c \
             bench/gate/gate.c bench/gate/shift.c bench/resume.c bench/supervise.c bench/scale/shard.c $(COMMON_C)
PEER_OBJS := $(PEER_C:%.c=$(PIC_BUILD)/%.o) $(COMMON_CU:%.cu=$(PIC_BUILD)/%.o)
PIC_CFLAGS = $(filter-out -DATTN_HAVE_CUPTI -DATTN_HAVE_CUDNN,$(ALL_CFLAGS)) -fPIC

# ------------------------------------------------------------- user knobs
GRID     ?= default
VARIANTS ?=
MODE     ?= cold,graph
WARM_MS  ?= 500
OUT      ?=
PEAK     ?= 1
RESUME   ?=
ROW_TIMEOUT ?=
# SUSTAIN=S: the sustained regime (rows sampled once the loaded board's clock
# and power have settled, at most S s); INIT=uniform|normal[:SIGMA]: the
# inputs of points that name none (default normal); PASS=fwd|bwd|fwd_bwd:
# what the rows of points that name none time (default fwd); FLUSH=memset|read:
# how cold mode flushes the L2 (default memset; docs/measuring.md)
SUSTAIN  ?=
INIT     ?=
PASS     ?=
FLUSH    ?=
# attnbench's options from the knobs, each value quoted; BENCH_ARGS_NO_OUT
# for the drivers that take OUT themselves (GPUS=, bench-slurm)
BENCH_ARGS_NO_OUT = $(call opt,--grid,$(GRID)) $(call opt,--mode,$(MODE)) $(call opt,--warm-ms,$(WARM_MS)) \
             $(call opt,--variants,$(VARIANTS)) $(if $(filter 1,$(PEAK)),--peak) $(call opt,--resume,$(RESUME)) \
             $(if $(filter 1,$(FORCE)),--force) $(call opt,--row-timeout,$(ROW_TIMEOUT)) \
             $(call opt,--sustain,$(SUSTAIN)) $(call opt,--init,$(INIT)) $(call opt,--pass,$(PASS)) \
             $(call opt,--flush,$(FLUSH))
BENCH_ARGS = $(BENCH_ARGS_NO_OUT) $(call opt,--out,$(OUT))
TRACE_GRID ?= seed
GPU_SLUG  = $(shell nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n1 | sed 's/^NVIDIA //' | tr 'A-Z' 'a-z' | sed 's/[^a-z0-9]\{1,\}/-/g; s/^-//; s/-$$//')
TRACE_DIR ?= results/$(GPU_SLUG)/traces

.PHONY: all bench compare bench-slurm sanitize-gpu trace regress baseline ab plots figures figure-deps browser-deps fuzz-deps test-sanitize report plot-deps check-deps slurm-deps test test-cpu test-gpu deps help clean FORCE

all: $(ATTNBENCH) $(REGRESS) $(AB) $(REPORT) $(MERGE) $(PEER_LIB) $(BUILD)/mma_peak ## build the runner (build/attnbench), the gate (build/regress), the A/B driver (build/ab), the report, the shards' merge and tools

# What the binary was built from: the git revision, and an injected slowdown
# when SLOWDOWN=VARIANT:PERCENT is set (for proving the gate). Rewritten only
# when it changes, so that only its users rebuild.
$(BUILD)/build_info.h: FORCE
	@mkdir -p $(@D)
	@rev=$(call shq,$(GIT_REV)) slowdown=$(call shq,$(SLOWDOWN)); \
	case $$rev in '' | *[!A-Za-z0-9._+-]*) echo "make: GIT_REV=$$rev: letters, digits and ._+- only" >&2; exit 2 ;; esac; \
	case $$slowdown in *[!A-Za-z0-9_:.]*) echo "make: SLOWDOWN=$$slowdown: VARIANT:PERCENT, e.g. flash_mma:10" >&2; exit 2 ;; esac; \
	{ echo "#define ATTN_GIT_REV \"$$rev\""; \
	  [ -z "$$slowdown" ] || echo "#define ATTN_SLOWDOWN \"$$slowdown\""; } > $@.tmp
	@cmp -s $@.tmp $@ && rm -f $@.tmp || mv $@.tmp $@

BUILD_INFO_USERS := $(BUILD)/common/env.o $(BUILD)/common/timing.o
$(BUILD_INFO_USERS): $(BUILD)/build_info.h
$(BUILD_INFO_USERS): MK_CFLAGS += -include $(BUILD)/build_info.h
$(BUILD_INFO_USERS:$(BUILD)/%=$(PIC_BUILD)/%): $(BUILD)/build_info.h
$(BUILD_INFO_USERS:$(BUILD)/%=$(PIC_BUILD)/%): MK_CFLAGS += -include $(BUILD)/build_info.h

# flash_hopper needs sm_90a (wgmma, TMA, setmaxnreg); other targets compile a
# stub that traps. A plain sm_90 cubin beside the sm_90a one is dropped, so
# that the driver cannot pick the stub on an H100/H200. Its 32 kernel
# instances (16 configurations × 2 dtypes) take about 75 s on 2 cores.
HOPPER_PLAIN_SM90 := -gencode=arch=compute_90,code=sm_90
HOPPER_NVCCFLAGS = $(filter-out $(HOPPER_PLAIN_SM90),$(MK_NVCCFLAGS)) -gencode=arch=compute_90a,code=sm_90a
$(BUILD)/variants/flash_hopper.o: ALL_NVCCFLAGS = $(HOPPER_NVCCFLAGS) $(NVCCFLAGS)

# hopper_compile WHAT,ON_SPILL: compile $< to $@ keeping ptxas's report beside
# the object (NAME.ptxas.log). An instance that spills or gets its wgmmas
# serialised (ptxas C75xx) costs 30% and more with no other symptom
# (variants/NOTES-flash_hopper.md, "keys per tile, idle consumers, and the
# power cap"): ON_SPILL=fail removes the object and fails, warn names them. The
# debug build (NVCCFLAGS=-DATTN_HOPPER_DEBUG: bounded mbarrier waits that
# print and trap, hopper_ptx.cuh) spills by design: warned, not failed.
define hopper_compile
	@mkdir -p $(@D)
	@echo "$(1)"
	@log=$(@:.o=.ptxas.log); \
	echo "$(NVCC) $(ALL_NVCCFLAGS) -Xptxas -v -MMD -MP -c $< -o $@"; \
	$(NVCC) $(ALL_NVCCFLAGS) -Xptxas -v -MMD -MP -c $< -o $@ 2> $$log; rc=$$?; \
	grep -v -E '^ptxas info|^ +[0-9]+ bytes stack frame' $$log >&2; [ $$rc = 0 ] || exit $$rc; \
	if grep -E 'C75[0-9][0-9]|[1-9][0-9]* bytes spill' $$log; then \
	  echo "$(notdir $<): ptxas spilled registers or serialised wgmmas (above; all of it in $$log)" >&2; \
	  $(if $(filter fail,$(2)),rm -f $@; exit 1;) fi
endef

$(BUILD)/variants/flash_hopper.o: variants/flash_hopper.cu
	$(call hopper_compile,flash_hopper: compiling its 32 kernel instances for sm_90a (about 75 s on 2 cores),$(if $(findstring ATTN_HOPPER_DEBUG,$(NVCCFLAGS)),warn,fail))

$(BUILD)/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/%.o: %.cu
	@mkdir -p $(@D)
	$(NVCC) $(ALL_NVCCFLAGS) -MMD -MP -c $< -o $@

# tools/mma_peak.cu: the mma.sync ceiling flash_mma is measured against (variants/NOTES.md).
$(BUILD)/mma_peak: tools/mma_peak.cu
	@mkdir -p $(@D)
	$(NVCC) $(ALL_NVCCFLAGS) $< -o $@

$(ATTNBENCH): $(BUILD)/bench/attnbench_main.o $(BUILD)/bench/attnbench.o $(BUILD)/bench/runner.o $(BUILD)/bench/gate/worker.o $(BENCH_LIB) $(LIB_OBJS)
	$(CC) $^ -o $@ $(ALL_LDFLAGS) $(MK_LDLIBS) $(LDLIBS)

$(BUILD)/tests/registry_test_variants.o: common/registry.c
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -DATTN_TEST_VARIANTS -MMD -MP -c $< -o $@

$(ATTNBENCH_TEST): $(BUILD)/bench/attnbench_main.o $(BUILD)/bench/attnbench.o $(BUILD)/bench/runner.o $(BUILD)/bench/gate/worker.o $(BENCH_LIB) \
                   $(filter-out $(BUILD)/common/registry.o,$(LIB_OBJS)) $(BUILD)/tests/registry_test_variants.o $(TEST_VARIANT_OBJS)
	$(CC) $^ -o $@ $(ALL_LDFLAGS) $(MK_LDLIBS) $(LDLIBS)

$(AB): $(BUILD)/bench/gate/ab.o $(BUILD)/bench/gate/compare.o $(BENCH_LIB) $(LIB_OBJS)
	$(CC) $^ -o $@ $(ALL_LDFLAGS) $(MK_LDLIBS) $(LDLIBS)

# build/ab with the test variants in its table: the GPU suite drives it with
# build/attnbench-test on both sides (a hung worker)
$(AB_TEST): $(BUILD)/bench/gate/ab.o $(BUILD)/bench/gate/compare.o $(BENCH_LIB) $(filter-out $(BUILD)/common/registry.o,$(LIB_OBJS)) \
            $(BUILD)/tests/registry_test_variants.o $(TEST_VARIANT_OBJS)
	$(CC) $^ -o $@ $(ALL_LDFLAGS) $(MK_LDLIBS) $(LDLIBS)

$(PIC_BUILD)/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(PIC_CFLAGS) -MMD -MP -c $< -o $@

$(PIC_BUILD)/%.o: %.cu
	@mkdir -p $(@D)
	$(NVCC) $(ALL_NVCCFLAGS) -Xcompiler -fPIC -MMD -MP -c $< -o $@

$(PIC_BUILD)/common/registry.o: PIC_CFLAGS += -DATTN_NO_BUILTIN_VARIANTS

$(PEER_LIB): $(PEER_OBJS)
	$(CC) -shared $^ -o $@ $(ALL_LDFLAGS) -lcublas -lcudart -lstdc++ -ldl -lm -lz

$(MERGE): $(BUILD)/bench/scale/merge.o $(BENCH_LIB) $(LIB_OBJS)
	$(CC) $^ -o $@ $(ALL_LDFLAGS) $(MK_LDLIBS) $(LDLIBS)

$(REGRESS): $(BUILD)/bench/gate/regress.o $(BENCH_LIB) $(LIB_OBJS)
	$(CC) $^ -o $@ $(ALL_LDFLAGS) $(MK_LDLIBS) $(LDLIBS)

GATE_ARGS    = $(call opt,--thresholds,$(THRESHOLDS)) $(call opt,--gpu,$(GPU))
REGRESS_ARGS = $(call opt,--results,$(RESULTS)) $(call opt,--baseline,$(BASELINE)) \
               $(call opt,--ab,$(AB_RUN)) $(if $(filter 1,$(TREND)),--trend) \
               $(GATE_ARGS) $(call opt,--markdown,$(MARKDOWN))
# gpu_check TARGET: stop before any build when this machine has no GPU.
gpu_check = command -v nvidia-smi >/dev/null || \
	  { echo "make $(1): no GPU here: nvidia-smi is not installed (no NVIDIA driver); run it on a GPU box" >&2; exit 2; }; \
	nvidia-smi -L 2>/dev/null | grep -q '^GPU ' || \
	  { echo "make $(1): no GPU here: nvidia-smi -L lists no device ($$(nvidia-smi -L 2>&1 | head -n 1)); run it on a GPU box" >&2; exit 2; }

# build/regress's own exit code (0 pass, 1 regression, 2 bad input) is named
# on stderr when it is not 0: make itself exits 2 for any failed recipe.
regress_exit = rc=$$?; [ $$rc = 0 ] || echo "make $(1): build/regress exited $$rc (1 regression, 2 bad input)" >&2; exit $$rc

# build/report is host code only (no CUDA): make plots and report need no
# CUDA toolkit, and a clone builds it in seconds (tests/check_clean_tree.sh)
REPORT_C := bench/report/report.c bench/report/report_data.c bench/report/report_html.c \
            common/results_read.c common/results.c common/csv.c common/errors.c common/problem.c \
            common/reference.c bench/gate/gate.c bench/gate/shift.c bench/gate/compare.c
$(REPORT): $(REPORT_C:%.c=$(BUILD)/%.o)
	$(CC) $^ -o $@ $(ALL_LDFLAGS) -lm -lz $(LDLIBS)

regress: $(REGRESS) ## gate the newest A/B pair (results/<gpu>/ab/); or RESULTS= BASELINE=, AB_RUN=DIR, TREND=1
	@$(REGRESS) $(REGRESS_ARGS); $(call regress_exit,regress)

baseline: $(REGRESS) ## bless the newest run (or RESULTS=) as results/<gpu>/baseline.csv if it passes the gate, or with REASON="..."
	@$(REGRESS) --bless $(call opt,--results,$(RESULTS)) $(GATE_ARGS) $(if $(REASON),--reason "$$ATTN_REASON"); \
	 $(call regress_exit,baseline)
# REASON is free text: it reaches build/regress through the environment, byte for byte
baseline: export ATTN_REASON = $(REASON)

# make ab: BASE (a git revision) and CAND (a revision, or the working tree when
# unset) built side by side — a revision is exported into build/ab-src/SHA/
# and built there by its own Makefile (bench/gate/ab_build.sh) — then measured
# interleaved in one run on one GPU by build/ab, and gated.
BLOCK_MS  ?=
BUDGET_MS ?=
AB_ARGS = $(call opt,--grid,$(GRID)) $(call opt,--mode,$(MODE)) $(call opt,--warm-ms,$(WARM_MS)) \
          $(call opt,--variants,$(VARIANTS)) $(call opt,--out,$(OUT)) $(call opt,--block-ms,$(BLOCK_MS)) \
          $(call opt,--budget-ms,$(BUDGET_MS)) $(call opt,--thresholds,$(THRESHOLDS)) \
          $(call opt,--markdown,$(MARKDOWN)) $(call opt,--sustain,$(SUSTAIN)) $(call opt,--init,$(INIT)) $(call opt,--pass,$(PASS)) \
          $(call opt,--row-timeout,$(ROW_TIMEOUT)) $(call opt,--flush,$(FLUSH))
ab: ## measure BASE=rev against CAND=rev (default: the working tree) interleaved on one GPU, gate CAND
	@[ -n $(call shq,$(BASE)) ] || { echo "make ab: BASE=<git revision> is required (e.g. make ab BASE=main)" >&2; exit 2; }
	@$(call gpu_check,ab)
	@base=$$(bench/gate/ab_build.sh $(call shq,$(BASE)) '') || exit 2; \
	 if [ -n $(call shq,$(CAND)) ]; then cand=$$(bench/gate/ab_build.sh $(call shq,$(CAND)) $(call shq,$(SLOWDOWN))) || exit 2; \
	 else $(MAKE) --no-print-directory $(ATTNBENCH) $(AB) >/dev/null || exit 2; cand=$(ATTNBENCH); fi; \
	 $(MAKE) --no-print-directory $(AB) >/dev/null || exit 2; \
	 $(AB) --base "$$base" --cand "$$cand" $(AB_ARGS); $(call regress_exit,ab)

# make compare: VARIANTS (two or more, C variants and Python peers alike) in
# turns at each point on one GPU, one worker each (build/ab --compare); REF
# the reference (default: the first); writes results/<gpu>/compare/ID.csv
# and ID.txt, the table of each variant's time relative to REF's.
REF ?=
# make compare measures the card's ceilings only when PEAK=1 is given (each
# worker alone on the GPU as it starts, so that none shares it)
COMPARE_ARGS = $(call opt,--grid,$(GRID)) $(call opt,--mode,$(MODE)) $(call opt,--warm-ms,$(WARM_MS)) \
               $(call opt,--ref,$(REF)) $(call opt,--out,$(OUT)) $(call opt,--block-ms,$(BLOCK_MS)) \
               $(call opt,--budget-ms,$(BUDGET_MS)) $(call opt,--sustain,$(SUSTAIN)) $(call opt,--init,$(INIT)) $(call opt,--pass,$(PASS)) \
               $(call opt,--row-timeout,$(ROW_TIMEOUT)) $(call opt,--resume,$(RESUME)) $(call opt,--flush,$(FLUSH)) \
               $(if $(filter override,$(origin PEAK)),$(if $(filter 1,$(PEAK)),--peak))
compare: ## measure VARIANTS=a,b,c (built in or Python peers) in turns at each point on one GPU; REF=a; SUSTAIN=S; RESUME=ID continues one; PEAK=1 measures the ceilings first (each worker alone); writes results/<gpu>/compare/ID.csv and its table ID.txt
	@[ -n $(call shq,$(VARIANTS)) ] || { echo "make compare: VARIANTS=a,b[,...] is required (e.g. make compare VARIANTS=flash_hopper,cudnn_sdpa)" >&2; exit 2; }
	@$(call gpu_check,compare)
	@$(MAKE) --no-print-directory $(ATTNBENCH) $(AB) $(PEER_LIB) >/dev/null || exit 2
	@ATTN_BUILD=$(BUILD) $(AB) --compare $(call shq,$(VARIANTS)) --bin $(ATTNBENCH) $(COMPARE_ARGS); \
	 rc=$$?; [ $$rc = 0 ] || echo "make compare: build/ab exited $$rc (1 a row failed, 2 bad input)" >&2; exit $$rc

# bench and trace look for a GPU before they build anything.
# GPUS=all or GPUS=0,2,3: one attnbench per GPU, each a shard of the sweep
# (--shard I/N, CUDA_VISIBLE_DEVICES), merged into one run (bench/scale/multi_gpu.sh)
GPUS ?=
# PEERS=torch,NAME: the peer modules tools/peers/NAME_peers.py (torch:
# PyTorch's attention), each measured in turn into the same run after the C
# variants (bench/peers.sh); PEER_VARIANTS=a,b picks peers
PEER_MODULES = $(patsubst tools/peers/%_peers.py,%,$(wildcard tools/peers/*_peers.py))
PEERS ?=
PEER_VARIANTS ?=
bench: ## run GRID × VARIANTS × MODE on the GPU, write results/<gpu>/RUN_ID.csv; RESUME=RUN_ID continues one; GPUS=all spreads it over the box's GPUs; PEERS=torch adds PyTorch's variants
	@$(call gpu_check,bench)
	@$(if $(and $(GPUS),$(PEERS)),echo "make bench: GPUS= and PEERS= do not go together: the peers run on one GPU" >&2; exit 2)
	@$(MAKE) --no-print-directory $(ATTNBENCH) $(if $(GPUS),$(MERGE)) $(if $(PEERS),$(PEER_LIB))
	$(if $(GPUS),OUT=$(call shq,$(OUT)) ATTNBENCH=$(ATTNBENCH) MERGE=$(MERGE) bench/scale/multi_gpu.sh $(call shq,$(GPUS)) $(BENCH_ARGS_NO_OUT),$(if $(PEERS),ATTNBENCH=$(ATTNBENCH) PEER_VARIANTS=$(call shq,$(PEER_VARIANTS)) ATTN_BUILD=$(BUILD) bench/peers.sh $(call shq,$(PEERS)) $(BENCH_ARGS),$(ATTNBENCH) $(BENCH_ARGS)))

# bench-slurm: the same sweep on a Slurm cluster (bench/scale/slurm/README.md): a
# job array of SHARDS tasks, one GPU each (--gres=gpu:1, GRES= to change), at
# most MAX_PARALLEL at once, and a merge job after them; prints the job ids and
# where the run lands (results/<GPU>/RUN_ID.csv). GPU= is required: the submit
# host may have no GPU, or not the nodes' model. Needs no GPU here; the paths
# must be on a filesystem the nodes share. GRES and SBATCH_ARGS pass through.
SHARDS       ?=
PARTITION    ?=
ACCOUNT      ?=
MAX_PARALLEL ?=
bench-slurm: ## submit GRID × VARIANTS × MODE to Slurm: SHARDS=N array tasks (one GPU each), GPU=h200, [PARTITION= ACCOUNT= MAX_PARALLEL=K]; a merge job joins them
	@[ -n $(call shq,$(SHARDS)) ] || { echo "make bench-slurm: SHARDS=N (the number of array tasks, one GPU each) is required" >&2; exit 2; }
	@[ -n $(call shq,$(GPU)) ] || { echo "make bench-slurm: GPU=NAME (the nodes' GPU model as results/<gpu>/ names it, e.g. h200) is required" >&2; exit 2; }
	@$(MAKE) --no-print-directory $(ATTNBENCH) $(MERGE)
	@SHARDS=$(call shq,$(SHARDS)) GPU=$(call shq,$(GPU)) PARTITION=$(call shq,$(PARTITION)) ACCOUNT=$(call shq,$(ACCOUNT)) \
	  MAX_PARALLEL=$(call shq,$(MAX_PARALLEL)) OUT=$(call shq,$(OUT)) \
	  ATTNBENCH=$(ATTNBENCH) MERGE=$(MERGE) bench/scale/slurm/submit.sh $(BENCH_ARGS_NO_OUT)

sanitize-gpu: ## compute-sanitizer (memcheck, racecheck, synccheck, initcheck) over every variant at small odd shapes; logs in results/<gpu>/sanitizer/
	@$(call gpu_check,sanitize-gpu)
	@$(MAKE) --no-print-directory $(ATTNBENCH)
	bench/scripts/sanitize_gpu.sh $(ATTNBENCH) $(call shq,results/$(GPU_SLUG)/sanitizer)

trace: ## trace one call of each variant at TRACE_GRID's points: Chrome JSON + ops.txt in TRACE_DIR
	@$(call gpu_check,trace)
	@$(MAKE) --no-print-directory $(ATTNBENCH)
	$(ATTNBENCH) $(call opt,--grid,$(TRACE_GRID)) --mode cold,graph $(call opt,--variants,$(VARIANTS)) \
	  --trace $(call shq,$(TRACE_DIR)) --out $(call shq,$(TRACE_DIR))
	@cat $(call shq,$(TRACE_DIR))/ops.txt

# -------------------------------------------------------------- plots, report
# make plots / make report draw one run: RESULTS=FILE; else the run
# plots/<gpu>/figures.conf names (the committed figures' run; <gpu>: GPU=,
# else the newest run's); else the newest run under results/. They say
# which, and why, in one line. The figures go to the run's own place,
# build/plots/<gpu>/RUN_ID/ (PLOT_DIR= elsewhere); BASELINE= adds the
# current/baseline figure for a baseline measured together with the run
# (an A/B pair). The committed figure sets, plots/<gpu>/, record their
# inputs in plots/<gpu>/figures.conf: `make figures` renders them again from
# those, into the same place. bench/report/render.sh does the work; every
# value reaches it in the environment (exported below), never through the
# shell's parser, and it refuses one it cannot pass on safely.
PLOT_SCRIPTS := headline throughput bandwidth latency speedup speedup_torch memory energy ratio
plots report figures: export ATTN_REPORT = $(REPORT)
plots report figures: export ATTN_PLOT_BUILD = $(BUILD)
plots report figures: export ATTN_PLOT_SCRIPTS = $(PLOT_SCRIPTS)
plots report figures: export ATTN_PLOT_RESULTS = $(RESULTS)
plots report figures: export ATTN_PLOT_BASELINE = $(BASELINE)
plots report figures: export ATTN_PLOT_THRESHOLDS = $(THRESHOLDS)
plots report figures: export ATTN_PLOT_DIR = $(PLOT_DIR)
plots report figures: export ATTN_PLOT_GPU = $(GPU)

plots: $(REPORT) plot-deps ## render plots/*.gp from RESULTS (default: the run plots/<gpu>/figures.conf names, else the newest) into build/plots/<gpu>/RUN_ID/ as PNG and SVG
	@bench/report/render.sh plots

report: $(REPORT) plot-deps ## plots, plus the HTML page report.html beside the figures (open it in a browser)
	@bench/report/render.sh report

figures: $(REPORT) figure-deps ## render the committed figure set plots/<GPU>/ (default h200) again from its plots/<GPU>/figures.conf, as PNG in 256 colours (pngquant)
	@bench/report/render.sh figures

figure-deps: ## install gnuplot and pngquant (make figures: the committed figures' palette) with apt-get when root
	@tests/deps.sh plots figures

# --------------------------------------------------------------------- tests
# Set both on the command line to use a Check outside pkg-config's reach.
CHECK_CFLAGS ?= $(shell pkg-config --cflags check 2>/dev/null)
CHECK_LIBS   ?= $(shell pkg-config --libs check 2>/dev/null)

# tests/deps.sh names every package the suites need and installs the
# missing ones with one apt-get run (as root), one deps.sh at a time; each
# target below is one deps.sh run, so that no two race apt's locks under
# make -j. make test runs deps alone, before it builds anything.
# CHECK_LIBS= on the command line: a Check of your own, not installed.
DEPS_CHECK = $(if $(filter command line,$(origin CHECK_LIBS)),,check)
deps: ## install what the tests need (tests/deps.sh lists it: Check, zlib, gnuplot, xmllint, pngquant, Chromium, clang; Slurm and MUNGE as root) with one apt-get run when root
	@tests/deps.sh $(DEPS_CHECK) plots figures browser fuzz $(if $(filter 0,$(shell id -u)),slurm)

# The test programs need only Check to build (a GPU box without gnuplot
# still builds and runs the GPU tests); running the plot tests needs gnuplot.
check-deps:
	@$(if $(DEPS_CHECK),tests/deps.sh check,:)

fuzz-deps: ## install clang (libFuzzer, for make fuzz) with apt-get when root
	@tests/deps.sh fuzz

browser-deps: ## install Chromium (the report page's test renders it headless) with apt-get when root
	@tests/deps.sh browser

slurm-deps: ## install Slurm and MUNGE (slurm-wlm, munge: the Slurm suite's single-node cluster) with apt-get when root
	@tests/deps.sh slurm

plot-deps: ## install gnuplot-nox (and xmllint for the plot tests) with apt-get when root
	@tests/deps.sh plots

$(BUILD)/tests/%.o: tests/%.c | check-deps
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(CHECK_CFLAGS) -MMD -MP -c $< -o $@

$(TEST_CPU): $(BUILD)/tests/check_cpu.o $(BENCH_LIB) $(LIB_OBJS)
	$(CC) $^ -o $@ $(ALL_LDFLAGS) $(CHECK_LIBS) $(MK_LDLIBS) $(LDLIBS)

$(TEST_GPU): $(BUILD)/tests/check_gpu.o $(BENCH_LIB) $(LIB_OBJS)
	$(CC) $^ -o $@ $(ALL_LDFLAGS) $(CHECK_LIBS) $(MK_LDLIBS) $(LDLIBS)

$(TEST_TRACE): $(BUILD)/tests/check_trace.o $(BENCH_LIB) $(LIB_OBJS)
	$(CC) $^ -o $@ $(ALL_LDFLAGS) $(CHECK_LIBS) $(MK_LDLIBS) $(LDLIBS)

$(TEST_PLOTS): $(BUILD)/tests/check_plots.o $(BUILD)/tests/testutil.o | $(REPORT)
	$(CC) $(filter %.o,$^) -o $@ $(ALL_LDFLAGS) $(CHECK_LIBS) $(LDLIBS)

# the shard plan, attnbench --dry-run (no GPU), build/merge
$(TEST_SHARD): $(BUILD)/tests/check_shard.o $(BUILD)/tests/testutil.o $(BENCH_LIB) $(LIB_OBJS) | $(ATTNBENCH) $(MERGE)
	$(CC) $(filter %.o,$^) -o $@ $(ALL_LDFLAGS) $(CHECK_LIBS) $(MK_LDLIBS) $(LDLIBS)

# the supervisor with tests/fake_runner.sh as its child; resume's file work
$(TEST_WATCHDOG): $(BUILD)/tests/check_watchdog.o $(BENCH_LIB) $(LIB_OBJS)
	$(CC) $^ -o $@ $(ALL_LDFLAGS) $(CHECK_LIBS) $(MK_LDLIBS) $(LDLIBS)

$(TEST_SHIFT): $(BUILD)/tests/check_shift.o $(BUILD)/bench/gate/shift.o $(BUILD)/common/errors.o
	$(CC) $^ -o $@ $(ALL_LDFLAGS) $(CHECK_LIBS) -lm $(LDLIBS)

# build/ab with tests/fake_worker.sh as both workers: no GPU needed
$(TEST_AB): $(BUILD)/tests/check_ab.o $(BUILD)/tests/testutil.o $(BUILD)/common/results_read.o $(BUILD)/common/results.o \
            $(BUILD)/common/csv.o $(BUILD)/common/errors.o $(BUILD)/common/problem.o | $(AB)
	$(CC) $(filter %.o,$^) -o $@ $(ALL_LDFLAGS) $(CHECK_LIBS) -lm -lz $(LDLIBS)

$(TEST_REGRESS): $(BUILD)/tests/check_regress.o $(BUILD)/tests/testutil.o $(BENCH_LIB) $(LIB_OBJS) | $(REGRESS)
	$(CC) $(filter %.o,$^) -o $@ $(ALL_LDFLAGS) $(CHECK_LIBS) $(MK_LDLIBS) $(LDLIBS)

# each libFuzzer target's short run inside make test (make fuzz: FUZZ_SECONDS)
CI_FUZZ_SECONDS ?= 10

# Every suite runs, each shows its own output, and tests/run_suites.sh ends
# with one line per suite and `total: N passed, N failed, N skipped`.
TEST_SUITES_CPU = \
	trace $(TEST_TRACE) \
	shift $(TEST_SHIFT) \
	regress $(TEST_REGRESS) \
	ab $(TEST_AB) \
	watchdog $(TEST_WATCHDOG) \
	shard $(TEST_SHARD) \
	peers "if command -v python3 >/dev/null; then ATTN_BUILD=$(BUILD) python3 tests/check_peers.py; else echo 'peers: no python3: skipped'; echo 'peers: 0 passed, 0 failed, 1 skipped'; fi" \
	plots $(TEST_PLOTS) \
	cpu $(TEST_CPU) \
	gate tests/check_committed.sh \
	markdown tests/check_markdown.sh \
	house tests/check_house.sh \
	make tests/check_make.sh \
	clean-tree tests/check_clean_tree.sh \
	report "tests/check_report.sh $(BUILD)/report-screenshot.png" \
	slurm tests/check_slurm.sh \
	sanitizers "$(MAKE) --no-print-directory test-sanitize" \
	fuzz "$(MAKE) --no-print-directory fuzz FUZZ_SECONDS=$(CI_FUZZ_SECONDS)"
TEST_SUITES = gpu "CK_FORK=no $(TEST_GPU)" $(TEST_SUITES_CPU)
# the suites' names, for make help: what run_suites.sh --list prints
SUITE_NAMES = $(shell tests/run_suites.sh --list $(TEST_SUITES))

# What the suites run; make test builds them after deps, before any suite.
TEST_CPU_PROGRAMS = $(ATTNBENCH) $(REGRESS) $(AB) $(REPORT) $(MERGE) $(TEST_CPU) $(TEST_TRACE) $(TEST_REGRESS) \
                    $(TEST_SHIFT) $(TEST_AB) $(TEST_WATCHDOG) $(TEST_SHARD) $(TEST_PLOTS) $(PEER_LIB)
# make test compiles the lab too (all CUDA code is built on CI; about 1.5 min on 2
# cores): a change to the shared kernel parts that breaks the lab fails there.
TEST_PROGRAMS = $(TEST_CPU_PROGRAMS) $(ATTNBENCH_TEST) $(AB_TEST) $(TEST_GPU) $(LAB_ATTNBENCH) $(LAB_AB)

# make test and test-cpu: SUITES= checked against the suites' names (in a
# dry run too: +), the deps installed alone, then the programs built (in
# parallel under -j), then the suites run
test: RUN_SUITES = $(TEST_SUITES)
test: RUN_PROGRAMS = $(TEST_PROGRAMS)
test-cpu: RUN_SUITES = $(TEST_SUITES_CPU)
test-cpu: RUN_PROGRAMS = $(TEST_CPU_PROGRAMS)
test: ## build everything; every suite (GPU ones skipped without a device), the gate over the committed A/B pairs; one summary line; SUITES=a,b runs only those
test-cpu: ## every suite but the GPU one; SUITES=a,b runs only those
test test-cpu:
	+@tests/run_suites.sh --check $(call opt,--only,$(SUITES)) $(RUN_SUITES)
	@$(MAKE) --no-print-directory deps
	@$(MAKE) --no-print-directory $(RUN_PROGRAMS)
	@tests/run_suites.sh $(call opt,--only,$(SUITES)) $(RUN_SUITES)

# The host code and the CPU suites again under AddressSanitizer and UBSan, in
# a build directory of their own; the suites run that build's programs
# (ATTN_BUILD). The CUDA objects are not instrumented by these sanitizers:
# they are copied from the main build rather than compiled twice.
SAN_BUILD := $(BUILD)/asan
CU_OBJS   := $(COMMON_CU:%.cu=%.o) $(VARIANT_SRCS:%.cu=%.o)
SAN_TESTS := trace test_trace shift test_shift regress test_regress ab test_ab watchdog test_watchdog shard test_shard plots test_plots cpu test_cpu
test-sanitize: check-deps $(addprefix $(BUILD)/,$(CU_OBJS)) ## the CPU suites under AddressSanitizer and UBSan, built in build/asan
	@for o in $(CU_OBJS); do mkdir -p $(SAN_BUILD)/$$(dirname $$o); cp $(BUILD)/$$o $(SAN_BUILD)/$$o; done
	@echo "make test-sanitize: building the host code with -fsanitize=address,undefined in $(SAN_BUILD)/"
	@$(MAKE) --no-print-directory BUILD=$(SAN_BUILD) SANITIZE=1 \
	  $(addprefix $(SAN_BUILD)/,regress ab report merge $(filter test_%,$(SAN_TESTS))) >$(SAN_BUILD)/build.log 2>&1 || \
	  { tail -n 30 $(SAN_BUILD)/build.log; exit 1; }
	@ATTN_BUILD=$(SAN_BUILD) ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1 \
	  tests/run_suites.sh $(foreach t,$(filter-out test_%,$(SAN_TESTS)),$(t) $(SAN_BUILD)/test_$(t))

test-gpu: check-deps $(ATTNBENCH) $(ATTNBENCH_TEST) $(AB) $(AB_TEST) $(TEST_GPU) ## GPU tests only (skipped without a device)
	CK_FORK=no $(TEST_GPU)

help: ## this list
	@echo "targets:"
	@grep -hE '^[a-z-]+:.*## ' $(firstword $(MAKEFILE_LIST)) | sed 's/:.*## /\t/' | awk -F'\t' '{printf "  make %-10s %s\n", $$1, $$2}'
	@echo "variables:"
	@echo "  GRID=NAME|FILE     grid for bench: bench/grids/NAME.grid or a path (default: default)"
	@echo "  VARIANTS=a,b       variants for bench (default: all; see build/attnbench --list)"
	@echo "  MODE=cold,hot,graph  timing modes for bench (default: cold,graph)"
	@echo "  WARM_MS=500        warm-up of each row before sampling, ms (default 500: the board's capped steady clock)"
	@echo "  FLUSH=read         cold mode's L2 flush: read (leaves the L2 clean) or memset (the default; its dirty lines' write-back is charged to the call)"
	@echo "  PEAK=0             skip measuring the GEMM and copy ceilings before bench (default: 1)"
	@echo "  TRACE_GRID=NAME    grid for trace (default: seed)"
	@echo "  TRACE_DIR=DIR      where trace writes JSON, ops.txt and its CSV (default: results/<gpu>/traces)"
	@echo "  OUT=DIR            results directory for bench (default: results/<gpu>)"
	@echo "  GPUS=all|0,2,3     bench: one attnbench per GPU, each a shard of the sweep, merged into one run"
	@echo "  PEERS=torch,NAME   bench: the peer modules tools/peers/NAME_peers.py (here: $(PEER_MODULES)), each measured in turn into the same run after the C variants"
	@echo "  PEER_VARIANTS=a,b  bench with PEERS=: the peers to run, of any of those modules (default: all; torch_naive, torch_sdpa_cudnn, ...)"
	@echo "  SHARDS=8 GPU=h200  bench-slurm: array tasks (one GPU each), and the nodes' GPU model (both required)"
	@echo "  PARTITION=p ACCOUNT=a MAX_PARALLEL=4  bench-slurm: sbatch's --partition, --account; at most 4 tasks at once"
	@echo "  GRES=gpu:h200:1 SBATCH_ARGS='--time=4:00:00'  bench-slurm: each task's --gres (default gpu:1), more sbatch options"
	@echo "  RESUME=RUN_ID      bench: continue that interrupted run (same GRID, VARIANTS, MODE); FORCE=1 across revisions"
	@echo "  ROW_TIMEOUT=120    bench: seconds a row may run before the watchdog ends it as error (0: no watchdog)"
	@echo "  RESULTS=FILE BASELINE=FILE THRESHOLDS=FILE GPU=NAME MARKDOWN=FILE  for regress / baseline"
	@echo "  AB_RUN=DIR         regress: gate that A/B run (default: the newest in results/<gpu>/ab/)"
	@echo "  TREND=1            regress: the newest plain run against results/<gpu>/baseline.csv"
	@echo "  REASON=\"...\"       baseline: bless a run that fails the gate anyway, saying why (logged as written)"
	@echo "  BASE=rev CAND=rev  ab: the revisions to compare (CAND default: the working tree)"
	@echo "  BLOCK_MS=25 BUDGET_MS=3000  ab, compare: timed work per block, and each side's budget per row"
	@echo "  VARIANTS=a,b,c REF=a  compare: the variants measured in turns (built in or Python peers), the reference"
	@echo "  SUSTAIN=10         bench, ab, compare: sample each row under back-to-back load once clock and power settle (at most 10 s)"
	@echo "  INIT=uniform       bench, ab, compare: the inputs of points that name none: normal (N(0,1), default), normal:SIGMA, uniform"
	@echo "  PASS=bwd           bench, ab, compare: what rows of points that name none time: fwd (default), bwd, fwd_bwd"
	@echo "  SLOWDOWN=VARIANT:PCT  build attnbench (make ab: the candidate) with VARIANT doing PCT% extra work per call (gate proofs)"
	@echo "  SUITES=cpu,report  test, test-cpu: only these suites (names as in the summary: $(SUITE_NAMES))"
	@echo "  FUZZ_SECONDS=30    make fuzz: seconds per libFuzzer target (make fuzz-build builds them; fuzz/README.md)"
	@echo "  CUDA_ARCH=90       compute capability to build for (default: detected, else 90)"
	@echo "  NVCC=path          the CUDA compiler (default: nvcc on PATH, else CUDA_HOME/bin/nvcc; CUDA_HOME default /usr/local/cuda)"
	@echo "  values and paths (OUT=, RESULTS=, REASON=, ...) are taken as written: make expands no \$$(...) in them"
	@echo "  WERROR=1           treat compiler warnings as errors (CI sets it)"
	@echo "  CFLAGS NVCCFLAGS LDFLAGS LDLIBS  appended to the project's own flags"

clean: ## remove build/
	rm -rf $(BUILD)

FORCE:

# the libFuzzer targets: make fuzz-build, make fuzz FUZZ_SECONDS=N (fuzz/README.md)
include fuzz/Makefile.fuzz
# flash_hopper's tuning lab (variants/lab/: its Makefile.lab and README.md)
include variants/lab/Makefile.lab
lab: $(LAB_ATTNBENCH) $(LAB_AB) ## build flash_hopper's tuning lab, build/lab/attnbench: A/B a configuration, promote it (variants/lab/README.md)

-include $(shell find $(BUILD) -path $(BUILD)/ab-src -prune -o -name '*.d' -print 2>/dev/null)
