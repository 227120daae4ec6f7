node 'web1.example.com', /^db\d+$/ {
  include db
}
node default { }
