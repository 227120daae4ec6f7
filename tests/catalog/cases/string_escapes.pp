notify { 'esc': message => ["tab\there", "nl\nx", "quote\"q", 'single\'s', "dollar \$x", "back\\slash", 'lit\n', "unknown \q"] }
