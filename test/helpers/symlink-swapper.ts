/**
 * The attacker of the race suites (test/security/races.test.ts, test/tenants/races.test.ts): a Perl program a
 * run_command runs in its sandbox, swapping `race/a` between a real directory and a symlink to a victim (its first
 * argument) in a tight loop until `race-stop` appears or its time (second argument, seconds) runs out. It writes
 * `race/started` once it races and prints how many swaps it made.
 */
export const SWAPPER = `
use strict;
my ($victim, $seconds) = @ARGV;
mkdir 'race'; mkdir 'race/a'; mkdir 'race/a/inner';
open(my $f, '>', 'race/a/secret.txt') or die; print $f "workspace copy\\n"; close $f;
unlink 'race/l'; symlink($victim, 'race/l') or die "symlink: $!";
open($f, '>', 'race/started') or die; close $f;
my $end = time + $seconds; my $n = 0;
while (!-e 'race-stop' && time < $end) {
  for my $k (1..200) {
    rename('race/a', 'race/d'); rename('race/l', 'race/a');
    select(undef, undef, undef, 0.001) if $k % 20 == 0; # now and then, hold the symlink a moment
    rename('race/a', 'race/l'); rename('race/d', 'race/a');
    $n++;
  }
}
print "$n\\n";
`;
