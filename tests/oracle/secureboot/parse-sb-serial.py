#!/usr/bin/env python3
"""parse-sb-serial.py SERIAL SCENARIO EDITS CMDLINE MODULES: the Secure Boot oracle's serial
log -> JSON on stdout (what the booted kernel reported, then per module: finit_module's result,
the kernel's lines, the module's and the global taint). Exit 1 when the log is incomplete."""
import json
import re
import sys

ESC = re.compile(r'\x1b\[[0-9;?]*[A-Za-z]|\x1bc|\r')


def main():
    path, scenario, edits, cmdline, modules = sys.argv[1:6]
    lines = [ESC.sub('', l) for l in open(path, errors='replace').read().split('\n')]
    out = {'scenario': scenario, 'varstore': edits.split(), 'extra_cmdline': cmdline,
           'modules': modules.split(), 'boot_log': [], 'steps': []}
    begun = ended = False
    step = None
    in_dmesg = False
    for l in lines:
        if l.startswith('KPORACLE-BEGIN'):
            begun = True
            continue
        if not begun:
            continue
        if l.startswith('KPORACLE-END'):
            ended = True
            break
        if in_dmesg:
            if l.startswith('KPDMESG-END'):
                in_dmesg = False
            elif l.strip():
                step['dmesg'].append(re.sub(r'^<\d+>(\[[ 0-9.]+\] )?', '', l).strip())
            continue
        key, _, val = l.partition(' ')
        if key == 'KPUNAME':
            out['uname'] = val.strip()
        elif key == 'KPCMDLINE':
            out['cmdline'] = val.strip()
        elif key == 'KPSIGENFORCE':
            out['sig_enforce'] = val.strip()
        elif key == 'KPLOCKDOWN':
            out['lockdown'] = val.strip()
        elif key == 'KPEFIVARS':
            out['efivars'] = int(val.strip() or 0)
        elif key == 'KPGTAINT0':
            out['global_taint0'] = int(val)
        elif key == 'KPMOKVAR':
            out.setdefault('mok_variables', []).append(val.strip())
        elif key == 'KPKEY':
            out.setdefault('keys', []).append(val.strip())
        elif key == 'KPBOOTLOG':
            out['boot_log'].append(re.sub(r'^\[[ 0-9.]+\] ', '', val).strip())
        elif key == 'KPSTEP-BEGIN':
            step = {'module': val.split()[1], 'rc': None, 'errno': None, 'dmesg': [],
                    'taint': {}}
        elif key == 'KPLOAD':
            m = re.match(r'(\S+) rc=(-?\d+) ?(\S*)', val)
            step['rc'] = int(m.group(2))
            step['errno'] = m.group(3) or None
        elif key == 'KPDMESG-BEGIN':
            in_dmesg = True
        elif key == 'KPTAINT':
            name, _, t = val.partition(' ')
            step['taint'][name] = t.strip()
        elif key == 'KPGTAINT':
            step['global_taint'] = int(val)
        elif key == 'KPSTEP-END':
            out['steps'].append(step)
            step = None
    if not (begun and ended) or len(out['steps']) != len(out['modules']):
        sys.stderr.write('parse-sb-serial: %s: incomplete log\n' % path)
        return 1
    json.dump(out, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write('\n')
    return 0


if __name__ == '__main__':
    sys.exit(main())
