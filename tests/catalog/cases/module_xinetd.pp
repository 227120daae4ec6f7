include xinetd
xinetd::service { 'tftp': port => 69, server => '/usr/sbin/in.tftpd', protocol => 'udp' }
