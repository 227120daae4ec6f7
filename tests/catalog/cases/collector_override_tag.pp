# A collector override that adds a tag makes another collector match the
# resource (cinder's lvm2 with tag +> 'cinder-support-package').
anchor { 'begin': }
package { 'lvm2': ensure => present }
Package<| title == 'lvm2' |> { tag +> 'support-package' }
Anchor['begin'] -> Package<| tag == 'support-package' |>
