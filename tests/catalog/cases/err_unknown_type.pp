foo { 'a': }
