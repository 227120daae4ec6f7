# A Hash takes only an Array or a Hash (rabbitmq::config).
$h = { 'a' => 1 }
$x = $h + undef
