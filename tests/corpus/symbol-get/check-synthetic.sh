#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# check-synthetic.sh KOPOLICY_BIN
#
# Assembles small module-shaped objects for x86_64, i386, arm64 and s390x
# (with the host `as` and, when installed, binutils-aarch64-linux-gnu and
# binutils-s390x-linux-gnu) holding the call shapes the exact tracer must
# follow, and checks `kopolicy info --json` on each:
#   tail   - the argument loaded just before a tail call (jmp/b/jg __symbol_get)
#   branch - two blocks load different strings into a callee-saved register,
#            merge, survive a call, and are copied into the argument register
#   param  - a local wrapper passes its parameter on; its caller loads the string
#   dyn    - a stack buffer filled by sprintf("fmt_%d"): dynamic, with the format
# An architecture whose assembler
# is missing is skipped. Ends with "N passed, N failed".
set -u
bin=${1:?usage: check-synthetic.sh KOPOLICY_BIN}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

common_tail='
	.section .modinfo,"a"
	.string "license=GPL"
	.section .gnu.linkonce.this_module,"aw"
	.zero NAMEOFF
	.string "syn"
	.zero 1000
'
strings='
	.section .rodata.str1.1,"aMS",@progbits,1
.LCa:	.string "alpha_attach"
.LCb:	.string "beta_attach"
.LCc:	.string "gamma_attach"
.LCd:	.string "delta_attach"
.LCf:	.string "fmt_%d"
.LCr:	.string "symbol:alpha_attach"
'

x86_64='
	.text
	.type f_tail,@function
f_tail:
	movq $.LCr, %rsi
	movq $.LCa, %rdi
	jmp __symbol_get
	.size f_tail,.-f_tail
	.type f_branch,@function
f_branch:
	pushq %rbx
	testl %esi, %esi
	je 1f
	leaq .LCb(%rip), %rbx
	jmp 2f
1:	movq $.LCc, %rbx
2:	call other
	movq %rbx, %rdi
	call __symbol_get
	popq %rbx
	ret
	.size f_branch,.-f_branch
	.type wrapper,@function
wrapper:
	call __fentry__
	call __symbol_get
	ret
	.size wrapper,.-wrapper
	.type f_caller,@function
f_caller:
	movl $.LCd, %edi
	call wrapper
	ret
	.size f_caller,.-f_caller
	.type f_dyn,@function
f_dyn:
	subq $40, %rsp
	movq %rsp, %rdi
	movq $.LCf, %rsi
	call sprintf
	movq %rsp, %rdi
	call __symbol_get
	addq $40, %rsp
	call __symbol_put
	call __symbol_put
	ret
	.size f_dyn,.-f_dyn
'

i386='
	.text
	.type f_tail,@function
f_tail:
	movl $.LCr, %edx
	movl $.LCa, %eax
	jmp __symbol_get
	.size f_tail,.-f_tail
	.type f_branch,@function
f_branch:
	pushl %ebx
	testl %edx, %edx
	je 1f
	movl $.LCb, %ebx
	jmp 2f
1:	movl $.LCc, %ebx
2:	call other
	movl %ebx, %eax
	call __symbol_get
	popl %ebx
	ret
	.size f_branch,.-f_branch
	.type wrapper,@function
wrapper:
	call __symbol_get
	ret
	.size wrapper,.-wrapper
	.type f_caller,@function
f_caller:
	movl $.LCd, %eax
	call wrapper
	ret
	.size f_caller,.-f_caller
	.type f_dyn,@function
f_dyn:
	subl $40, %esp
	leal 4(%esp), %eax
	movl $.LCf, %edx
	call sprintf
	leal 4(%esp), %eax
	call __symbol_get
	addl $40, %esp
	call __symbol_put
	call __symbol_put
	ret
	.size f_dyn,.-f_dyn
'

arm64='
	.text
	.type f_tail,%function
f_tail:
	adrp x1, .LCr
	add x1, x1, :lo12:.LCr
	adrp x0, .LCa
	add x0, x0, :lo12:.LCa
	b __symbol_get
	.size f_tail,.-f_tail
	.type f_branch,%function
f_branch:
	stp x29, x30, [sp, #-32]!
	str x19, [sp, #16]
	cbz w1, 1f
	adrp x19, .LCb
	add x19, x19, :lo12:.LCb
	b 2f
1:	adrp x19, .LCc
	add x19, x19, :lo12:.LCc
2:	bl other
	mov x0, x19
	bl __symbol_get
	ldr x19, [sp, #16]
	ldp x29, x30, [sp], #32
	ret
	.size f_branch,.-f_branch
	.type wrapper,%function
wrapper:
	b __symbol_get
	.size wrapper,.-wrapper
	.type f_caller,%function
f_caller:
	adrp x0, .LCd
	add x0, x0, :lo12:.LCd
	b wrapper
	.size f_caller,.-f_caller
	.type f_dyn,%function
f_dyn:
	stp x29, x30, [sp, #-64]!
	mov x29, sp
	add x0, sp, #16
	adrp x1, .LCf
	add x1, x1, :lo12:.LCf
	bl sprintf
	add x0, sp, #16
	bl __symbol_get
	bl __symbol_put
	bl __symbol_put
	ldp x29, x30, [sp], #64
	ret
	.size f_dyn,.-f_dyn
'

s390x='
	.text
	.type f_tail,@function
f_tail:
	larl %r3, .LCr
	larl %r2, .LCa
	jg __symbol_get
	.size f_tail,.-f_tail
	.type f_branch,@function
f_branch:
	stmg %r11,%r15,88(%r15)
	cije %r3,0,1f
	larl %r11, .LCb
	j 2f
1:	larl %r11, .LCc
2:	brasl %r14, other
	lgr %r2, %r11
	brasl %r14, __symbol_get
	lmg %r11,%r15,88(%r15)
	br %r14
	.size f_branch,.-f_branch
	.type wrapper,@function
wrapper:
	jg __symbol_get
	.size wrapper,.-wrapper
	.type f_caller,@function
f_caller:
	larl %r2, .LCd
	jg wrapper
	.size f_caller,.-f_caller
	.type f_dyn,@function
f_dyn:
	aghi %r15,-200
	la %r2,160(%r15)
	larl %r3, .LCf
	brasl %r14, sprintf
	la %r2,160(%r15)
	brasl %r14, __symbol_get
	brasl %r14, __symbol_put
	brasl %r14, __symbol_put
	aghi %r15,200
	br %r14
	.size f_dyn,.-f_dyn
'

expected='alpha_attach exact f_tail
beta_attach exact f_branch
gamma_attach exact f_branch
delta_attach exact wrapper
- dynamic f_dyn fmt_%d'

passed=0
failed=0
for arch in x86_64 i386 arm64 s390x; do
	case $arch in
	x86_64) as=(as --64) nameoff=24 ;;
	i386) as=(as --32) nameoff=12 ;;
	arm64) as=(aarch64-linux-gnu-as) nameoff=24 ;;
	s390x) as=(s390x-linux-gnu-as -m64) nameoff=24 ;;
	esac
	if ! command -v "${as[0]}" >/dev/null; then
		echo "synthetic $arch: ${as[0]} not installed, skipped"
		continue
	fi
	printf '%s\n%s\n%s\n' "$strings" "${!arch}" "${common_tail/NAMEOFF/$nameoff}" >"$work/$arch.s"
	if ! "${as[@]}" -o "$work/$arch.ko" "$work/$arch.s" 2>"$work/$arch.err"; then
		echo "synthetic $arch: FAIL (assembler)"
		cat "$work/$arch.err"
		failed=$((failed + 1))
		continue
	fi
	got=$("$bin" info --json "$work/$arch.ko" 2>"$work/$arch.err" | python3 -c '
import json, sys
d = json.load(sys.stdin)
rows = []
m = d["modules"][0] if d["modules"] else {"symbol_get": []}
for g in m["symbol_get"]:
    extra = g["format"] if g["method"] == "dynamic" else ""
    rows.append(" ".join(x for x in (g["symbol"] or "-", g["method"], g["function"], extra) if x))
print("\n".join(sorted(rows)))
')
	want=$(echo "$expected" | sort)
	if [ "$got" = "$want" ]; then
		echo "synthetic $arch: PASS"
		passed=$((passed + 1))
	else
		echo "synthetic $arch: FAIL"
		diff <(echo "$want") <(echo "$got") | sed 's/^/  /'
		failed=$((failed + 1))
	fi
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
