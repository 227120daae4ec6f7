# notify: the title as message, an explicit message, withpath, a message
# with a newline, and a notify inside a class (its path in the log source).
$root = '/tmp/ferry-puppet-case'

class greet {
  notify { 'from a class':
    message => "in class greet, root ${::root}",
  }
}

notify { 'title only': }

notify { 'explicit':
  message => 'the message, not the title',
}

notify { 'with path':
  message  => 'logged with its resource path',
  withpath => true,
}

notify { 'two lines':
  message => "first line\nsecond line",
}

include greet
