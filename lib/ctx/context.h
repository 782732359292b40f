/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The pipeline as one object, in the spirit of libkmod's kmod_ctx: a context owns the
 * target kernel (its base of exports and its facts), the module set, the dependency graph
 * and the simulation, and everything they were read from (a modules tree, the running
 * system, the trusted keys, depmod's view, modprobe's chain). The front ends (check, graph,
 * explain, hook) fill a struct kp_ctx_opts from their command line, load the context one
 * way, and format what it holds.
 *
 * Loaders:
 *  - kp_ctx_add_files() and kp_ctx_read_range(): modules only, a window at a time (info);
 *  - kp_ctx_load(): the kernel from --kernel files, a basedir (-b ROOT), the running
 *    system (--running, --root) or the running kernel's installed files; the modules from
 *    explicit files, or a whole tree as depmod sees it (-b or --running without files);
 *  - kp_ctx_load_chain(): modprobe's chain for one name on the running system, read
 *    lazily (context-chain.c): only the modules the chain needs, only the exports they
 *    can look up, no kallsyms unless nothing else describes the kernel.
 *
 * Errors: -1 with the message in struct kp_err. What is said without stopping (a module
 * that cannot be read, a directory without modules, a kernel newer than modelled) goes to
 * the log function of struct kp_ctx_env, in the order it happens.
 */
#ifndef KP_CONTEXT_H
#define KP_CONTEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "graph/graph.h"
#include "graph/module-set.h"
#include "system/depmod-config.h"
#include "kernel/efi-vars.h"
#include "kernel/kernel-base.h"
#include "kernel/kernel-facts.h"
#include "system/kernel-tree.h"
#include "system/modprobe-chain.h"
#include "system/module-trust.h"
#include "util/symbol-set.h"
#include "system/running.h"
#include "kernel/sig-keys.h"
#include "kernel/vmlinux-btf.h"
#include "sim/loader.h"
#include "util/util.h"

struct kp_facts_cache;
struct kp_base_cache;

/* What names the target kernel: the command line's target options, as given. */
struct kp_ctx_opts {
	struct kp_facts_opts fo;
	const char *kernels[16]; /* --kernel: exports files or directories */
	size_t nkernels;
	const char *basedir;	       /* -b: a root holding lib/modules/<release> */
	bool running;		       /* --running: the live system under root */
	const char *root;	       /* --root, NULL: "/" */
	const char *trusted_certs[16]; /* --trusted-cert */
	size_t ntrusted_certs;
	const char *kernel_images[8]; /* --kernel-image */
	size_t nkernel_images;
	bool no_kernel_keys;  /* only kernel_images and trusted_certs, not the keys found */
	const char *efi_vars; /* --efi-vars DIR ("none": not read); NULL: the live system's */
	struct {
		const char *path;
		bool pending; /* --mok-pending: in MokNew, enrolled at the next boot */
	} moks[16];	      /* --mok, --mok-pending */
	size_t nmoks;
	const char *dkms_key; /* --dkms-key; NULL: the machine's (dkms framework.conf) */
	bool this_machine;    /* --this-machine: the modules are for this machine (under root) */
	bool read_in_tree;    /* chain: read in-tree dependencies, not only Module.symvers */
	bool no_symbol_get;   /* chain: symbol_get() call sites not traced (kp_open_opts) */
	/*
	 * check --provider: modules (files, directories) read, resolved against and simulated
	 * but not reported; other files are symbol files (Module.symvers) added to the base
	 */
	const char *provider_paths[32];
	size_t nprovider_paths;
	const char *vmlinux_btf; /* --vmlinux-btf: the kernel's BTF (vmlinux or raw) */
	const char *ima_policy;	 /* --ima-policy: the IMA policy; NULL: the live one or none */
	/* hook --state-dir: marks of EFI readers left behind (system/stuck-reader.h); NULL: none */
	const char *reader_marks_dir;
};

/* Initialises @o: nothing given (kp_facts_opts_init()). */
void kp_ctx_opts_init(struct kp_ctx_opts *o);

/* How the context reads and where it reports: the front end's environment. */
struct kp_ctx_env {
	size_t max_size;	 /* largest decompressed module; 0: KP_DEFAULT_MAX_SIZE */
	unsigned jobs;		 /* 0: one per CPU (the chain: up to 4) */
	bool full_modinfo;	 /* keep every .modinfo tag */
	kp_progress_fn progress; /* reading a module set; may be NULL */
	void *progress_data;
	/* the facts cache, asked for when a module is about to be read; may be NULL */
	struct kp_facts_cache *(*cache)(void *data);
	void *cache_data;
	/*
	 * The base cache (cache/base-cache.h), for the kernel's Module.symvers and config; may
	 * be NULL (parsed every run). Asked with cache_data. Used by the lazy mode (the hook).
	 */
	struct kp_base_cache *(*base_cache)(void *data);
	/* a diagnostic that does not stop the load; @path may be NULL */
	void (*log)(void *data, const char *path, const char *msg);
	void *log_data;
	/*
	 * libkmod's private copy of the root's indexes and modprobe.d when the front end keeps
	 * one across contexts (the hook's two passes): borrowed, zeroed by its owner, removed
	 * by it after the last context; NULL: the context's own (kp_ctx_kmod_copy()).
	 */
	struct kp_kmod_copy *kmod_copy;
};

/* What only the modprobe hook's load, kp_ctx_load_chain() (context-chain.c), keeps. */
struct kp_ctx_hook {
	struct kp_chain chain;
	bool have_chain;
	/* libkmod's answers for the name asked (cache/kmod-memo.h; the facts cache's), or NULL */
	struct kp_kmod_memo *kmemo;
	struct kp_symset wanted; /* every symbol the chain can look up */
	/*
	 * a chain module's import name may run into the guard page: find_symbol()'s prefix
	 * comparisons can meet any export (sim/rules/find-prefix.c), so none is filtered out
	 */
	bool want_every_export;
	struct kp_module **providers; /* loaded modules read for their exports */
	size_t nproviders, providers_cap;
	const char *exports_from; /* where vmlinux's exports came from */
	bool base_has_modules;	  /* Module.symvers: in-tree modules' exports too */
	bool skip_in_tree;	  /* in-tree dependencies not loaded are not read */
	bool *in_set;		  /* per chain module: read into the set */
	bool keep_btf; /* the chain reads before its facts: keep .BTF if it may be checked */
	/* the kernel BTF's path, not loaded yet: its memo scope from the base cache entry */
	char *btf_deferred;
};

/* The tree's kernel image being read on its own thread (context-image.h). */
struct kp_ctx_image {
	struct kp_image_read *read; /* NULL: none being read */
	/* the front end's log function while the lines are held */
	void (*log)(void *data, const char *path, const char *msg);
	void *log_data;
	struct kp_ctx_held *held;
	size_t nheld, cap;
	bool unplaced_due; /* kp_ctx_warn_unplaced() before held line @unplaced_at */
	size_t unplaced_at;
	bool failed; /* the image's error, @err, is the run's */
	struct kp_err err;
	char *path; /* the image being read, for its error */
};

struct kp_ctx {
	struct kp_ctx_opts o; /* a copy; o.fo completed from what the kernel's files say */
	struct kp_ctx_env env;

	struct kp_kernel_base *base;
	const struct kp_kernel_base *base_borrowed; /* the running kernel's kallsyms */
	struct kp_kernel_facts facts;
	struct kp_module_set set;
	size_t read_failures; /* modules (or directories of them) that could not be read */
	char **empty_dirs;    /* directory operands holding no module (KP_CTX_EMPTY_DIR) */
	size_t nempty_dirs;
	size_t nwarnings_said; /* the set's walk warnings said so far (kp_ctx_say_walk_warnings())
				*/
	struct kp_graph graph;
	struct kp_simulation sim;
	bool have_sim;

	struct kp_tree tree; /* -b, the default kernel's, or the chain's */
	bool have_tree;
	/* libkmod's private copy of the root's indexes and modprobe.d without env.kmod_copy:
	 * made at most once by the tree or the chain that first needs it, removed by
	 * kp_ctx_release() after them (kp_ctx_kmod_copy()) */
	struct kp_kmod_copy own_kmod_copy;
	struct kp_running run; /* --running, or the chain's live state */
	bool have_run;
	const char **run_loaded; /* names of the loaded modules (arena of run) */
	const char **run_prop;	 /* those carrying P */
	size_t run_nprop;
	struct kp_keyring keys;	      /* the key sources of o, the tree's image, /proc/keys */
	struct kp_ctx_image image;    /* the tree's image read beside the modules */
	struct kp_sig_memo *own_memo; /* the keys' verdicts when no facts cache keeps them */
	/* module BTF judged as it is read (kernel/btf-judge.h) */
	struct kp_btf_judger *btf_judger;
	struct kp_efi_state efi; /* the machine's EFI variables (context-machine.c) */
	bool have_efi;
	char *ima_policy_text;	 /* the IMA policy read (context-machine.c), lent to o.fo */
	char *ima_policy_source; /* its path */
	struct kp_vmlinux_btf vmlinux_btf; /* the kernel's raw BTF, which facts parses */
	struct kp_depmod_cfg depmod;	   /* a whole tree: depmod.d of the image */
	bool have_depmod;
	struct kp_depmod_shadow *shadowed; /* files depmod does not use */
	size_t nshadowed;
	char release_buf[256]; /* uname -r, when the running kernel is the default */

	struct kp_ctx_hook hook; /* kp_ctx_load_chain() only */
};

/* Why a directory operand is an input error. */
#define KP_CTX_EMPTY_DIR "no kernel modules (*.ko, *.ko.xz, *.ko.zst, *.ko.gz) in this directory"

/* @opts and @env are copied; the strings they point to must outlive the context. */
void kp_ctx_init(struct kp_ctx *c, const struct kp_ctx_opts *opts, const struct kp_ctx_env *env);
void kp_ctx_release(struct kp_ctx *c);
/*
 * The private copy for libkmod that @c's tree and chain share (system/modprobe-snapshot.h):
 * the front end's (env.kmod_copy), else @c's own.
 */
struct kp_kmod_copy *kp_ctx_kmod_copy(struct kp_ctx *c);

enum {
	KP_CTX_SIMULATE = 1 << 0, /* run the loader simulation after the graph */
	/*
	 * An operand that is no file and holds no '/' is a module name, resolved in the
	 * modules tree as modprobe resolves it (context-names.h): `check -b ROOT nvidia uas`.
	 */
	KP_CTX_NAMES = 1 << 1,
	/* with KP_CTX_SIMULATE: what each load read recorded (sim-reads.h), for a splice */
	KP_CTX_RECORD = 1 << 2,
};

/*
 * The target kernel alone, as kp_ctx_load() makes it before it reads a module: its files,
 * keys (the tree's image read to the end), facts through the base cache, BTF and machine
 * facts; no walk, no module read (the context-less splice, issue 28). What is said goes to
 * the log as kp_ctx_load() would say it. 0, or -1 with @err.
 */
int kp_ctx_load_kernel_facts(struct kp_ctx *c, struct kp_err *err);
/*
 * Finds the kernel (o.kernels, o.running, o.basedir, else the running kernel's installed
 * files), builds its facts, reads the modules (@paths, anything already added to c->set,
 * or the whole tree as depmod sees it when -b or --running name no file), builds the graph
 * and, with KP_CTX_SIMULATE, simulates the loads. 0, or -1 with @err.
 */
int kp_ctx_load(struct kp_ctx *c, char **paths, int npaths, unsigned flags, struct kp_err *err);

/*
 * Adds @paths to the set (directories walked for modules); a directory holding none is said
 * (the log function) and counted. Returns that count, or -1 with @err.
 */
ssize_t kp_ctx_add_files(struct kp_ctx *c, char **paths, int npaths, struct kp_err *err);
/*
 * Reads entries [@from, @to) of the set not read yet (the symbol names shared with the base
 * when there is one). Returns how many failed (their error in the entry, not said).
 */
size_t kp_ctx_read_range(struct kp_ctx *c, size_t from, size_t to);
/* The context takes @keys (the front end's trusted keys); @keys is left empty. */
void kp_ctx_take_keys(struct kp_ctx *c, struct kp_keyring *keys);

/* The kernel exports in use (from --kernel, -b, --running or the defaults). */
const struct kp_kernel_base *kp_ctx_base(const struct kp_ctx *c);

/*
 * The running system under o.root read the cheap way, as modprobe's hook needs it: the live
 * state (no kallsyms), the tree of its release, the keys /proc/keys lists plus
 * o.kernel_images and o.trusted_certs (never the installed image: seconds to decompress).
 */
int kp_ctx_open_live(struct kp_ctx *c, struct kp_err *err);
/*
 * The kernel's BTF for @f when its config checks module BTF: --vmlinux-btf, else the
 * running kernel's /sys/kernel/btf/vmlinux, else the tree's build/vmlinux. 0, or -1 when
 * --vmlinux-btf cannot be read or memory runs out. The hook with a facts cache, when the base
 * cache has the BTF's entry: not loaded yet, only its memo scope taken from the entry's
 * header (c->vmlinux_btf.scope) and @f's vmlinux_btf_source set; see below.
 */
int kp_ctx_vmlinux_btf(struct kp_ctx *c, struct kp_kernel_facts *f, struct kp_err *err);
/*
 * The hook: the kernel BTF that kp_ctx_vmlinux_btf() left unloaded (c->hook.btf_deferred,
 * its memo scope known) loaded now, as kp_ctx_vmlinux_btf() would have; nothing when it
 * was loaded. 0, or -1 with @err.
 */
int kp_ctx_vmlinux_btf_deferred(struct kp_ctx *c, struct kp_err *err);
/*
 * The keys' signature-verdict memo (cache/sig-memo.h): the facts cache's, or this run's own
 * when there is none. Before the keys are read (kernel images) and any signature is checked.
 */
void kp_ctx_attach_sig_memo(struct kp_ctx *c);

/*
 * What modprobe would load for @name on the running system (kp_ctx_open_live() first), as a
 * set, graph and simulation: the chain resolved like modprobe; its modules that are neither
 * built in, loaded nor described by Module.symvers read; the kernel's exports filtered to
 * what they can look up; loaded providers read for their exports. A chain with nothing to
 * load leaves the set empty and simulates nothing. 0, or -1 with @err.
 */
int kp_ctx_load_chain(struct kp_ctx *c, const char *name, struct kp_err *err);

/*
 * An in-tree dependency of the chain not loaded yet, left to Module.symvers: its exports and
 * their classes are there, and in-tree modules are never proprietary by license.
 */
bool kp_ctx_chain_described(const struct kp_ctx *c, const struct kp_chain_module *cm);

/*
 * After kp_ctx_load_chain(): every module file of the chain kmod opens by name once the hook
 * answers (neither built in nor loaded), and every directory from the root down to it, can
 * be changed by nobody but root and the effective user (system/module-trust.h): 1; 0 when
 * one can (*@bad says which, its owner and mode); -1 with @err when one cannot be checked
 * (context-chain-trust.c).
 */
int kp_ctx_chain_trusted(const struct kp_ctx *c, struct kp_untrusted *bad, struct kp_err *err);

#endif
