node 'other.example.com' { notify { 'wrong': } }
node 'node1' {
  $where = 'in node'
  include nodeclass
  notify { 'node body': }
}
node default { notify { 'default': } }
class nodeclass { notify { "nodeclass sees ${where}": } }
