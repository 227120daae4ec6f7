notify { 'dig': message => [
  $facts.dig('os', 'release', 'major'), $facts.dig('nope', 'x'), fact('os.family'), fact('networking.interfaces.eth0.mac'),
  getvar('facts.os.name'), $facts['os']['release'].keys.sort,
] }
