# stdlib::xml_encode types are text or attr.
notify { "x": message => stdlib::xml_encode("a", "cdata") }
