helper_two=2
