/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A tiny "vmlinux" for test-vmlinux.c: export tables laid out as a linked
 * kernel has them. Regenerate with data/gen-vmlinux.sh (x86_64 binutils):
 *   default: 12-byte PREL32 entries (x86_64/arm64, 5.4+); namespace "" or a name
 *   -DABS:   24-byte absolute entries (s390x-like), NULL namespace when none
 */
#ifdef ABS
#define REF(x) .quad x
#define NONS .quad 0
#else
#define REF(x) .long x - .
#define NONS REF(__kstrtabns_empty)
#endif

	.text
	.globl _start
_start:
printk:		ret
kfree:		ret
gpl_func:	ret
dma_buf_get:	ret

	.data
jiffies:	.quad 0

	.section .rodata, "a"
	.globl linux_banner
linux_banner:
	.asciz "Linux version 6.99.0-test (builder@example) #1 SMP PREEMPT_DYNAMIC\n"

	.section __ksymtab_strings, "aMS", @progbits, 1
__kstrtab_jiffies:	.asciz "jiffies"
__kstrtab_kfree:	.asciz "kfree"
__kstrtab_printk:	.asciz "printk"
__kstrtab_dma_buf_get:	.asciz "dma_buf_get"
__kstrtab_gpl_func:	.asciz "gpl_func"
__kstrtabns_empty:	.asciz ""
__kstrtabns_DMA_BUF:	.asciz "DMA_BUF"

	.section __ksymtab, "a"
	.balign 4
__ksymtab_jiffies:	REF(jiffies); REF(__kstrtab_jiffies); NONS
__ksymtab_kfree:	REF(kfree); REF(__kstrtab_kfree); NONS
__ksymtab_printk:	REF(printk); REF(__kstrtab_printk); NONS

	.section __ksymtab_gpl, "a"
	.balign 4
__ksymtab_dma_buf_get:	REF(dma_buf_get); REF(__kstrtab_dma_buf_get); REF(__kstrtabns_DMA_BUF)
__ksymtab_gpl_func:	REF(gpl_func); REF(__kstrtab_gpl_func); NONS

	.section __kcrctab, "a"
	.long 0x11111111, 0x22222222, 0x33333333
	.section __kcrctab_gpl, "a"
	.long 0x44444444, 0x55555555
