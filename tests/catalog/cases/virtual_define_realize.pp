define vd ($msg = 'x') { notify { "vd-${title}": message => $msg } }
@vd { 'one': msg => 'realized' }
@vd { 'two': }
realize(Vd['one'])
