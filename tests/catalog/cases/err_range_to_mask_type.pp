# range_to_mask's three dispatches refuse a string that is no CPU list.
$x = range_to_mask('cpus')
