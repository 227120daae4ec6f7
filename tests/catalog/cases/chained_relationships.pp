class a1 { notify { 'a1': } }
class a2 { notify { 'a2': } }
include a1, a2
Class['a1'] -> Class['a2']
[Notify['x1'], Notify['x2']] -> Notify['x3']
notify { ['x1', 'x2', 'x3']: }
Notify['x1'] -> Notify['x2'] -> Notify['x3']
