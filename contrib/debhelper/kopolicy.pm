#!/usr/bin/perl
# SPDX-License-Identifier: GPL-2.0-or-later
# debhelper sequence addon "kopolicy" (dh $@ --with kopolicy, or Build-Depends:
# dh-sequence-kopolicy): check the kernel modules of each package after dh_install.
use strict;
use warnings;
use Debian::Debhelper::Dh_Lib;

insert_after('dh_install', 'dh_kopolicy');

1;
