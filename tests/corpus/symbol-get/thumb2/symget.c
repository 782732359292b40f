// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * symbol_get() call shapes for the ARM backend in ARM and Thumb-2 code, built by
 * check-thumb2.sh with Debian 12's arm-linux-gnueabihf-gcc (no Debian kernel is
 * Thumb-2: CONFIG_THUMB2_KERNEL is off in armmp). Not a kernel module: an object
 * with just enough of one (.gnu.linkonce.this_module, .modinfo) for kopolicy info.
 */
extern void *__symbol_get(const char *name);
extern int cond(int x);
extern void *g(void *p);

/* a tail call, and a conditional choice of two names (movle / ite eq) */
void *f(int x)
{
	if (cond(x))
		return __symbol_get("foo_attach");
	return __symbol_get(x > 3 ? "bar_attach" : "baz_attach");
}

/* branches to three call sites, one a normal call */
void *h(int x, int y)
{
	void *p;

	if (y == 1)
		p = __symbol_get("one_attach");
	else if (y == 7)
		p = __symbol_get("seven_attach");
	else
		p = g(__symbol_get(x ? "x_attach" : "y_attach"));
	return p;
}

/* the name is a parameter of a local function: its callers pass it */
static __attribute__((noinline)) void *via(const char *n)
{
	cond(1);
	return __symbol_get(n);
}

void *k(int a)
{
	return a ? via("via_a_attach") : via("via_b_attach");
}

/* 32-bit struct module: name at offset 12 */
struct mod {
	char pad[12];
	char name[56];
	char rest[512];
};
__attribute__((section(".gnu.linkonce.this_module"), used)) struct mod this_module = {
	.name = "t",
};
__attribute__((section(".modinfo"), used)) const char modinfo[] = "license=GPL";
