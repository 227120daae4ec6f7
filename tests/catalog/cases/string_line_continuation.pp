# A backslash before a line break removes both in a double-quoted string
# and in a heredoc with the L flag (`\\` before a break keeps the break);
# `\L` itself is no escape.
$x = 'b'
notify { 'dq':
  message => "a \
    ${x} \\
c",
}
$h = @("END"/L)
  one \
  two ${x}
  | END
notify { 'heredoc': message => $h }
$h2 = @(END/L)
  three \L \
  four
  | END
notify { 'heredoc_plain': message => $h2 }
$h3 = @(END)
  five \
  six
  | END
notify { 'heredoc_no_flag': message => $h3 }
