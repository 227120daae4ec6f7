# A collected source related to a missing target names the collected
# resource (nova's File_line ~> Service['libvirt']).
file_line { 'opts': path => '/etc/default/x', line => 'a=b', tag => 'opts-tag' }
File_line<| tag == 'opts-tag' |> ~> Service['missing']
