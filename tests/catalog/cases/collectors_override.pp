package { 'p1': ensure => installed, tag => 'web' }
package { 'p2': ensure => installed }
Package <| tag == 'web' |> { ensure => latest }
Package <| title == 'p2' |> { provider => 'apt' }
service { 's1': ensure => running }
Service <| |> { enable => true }
