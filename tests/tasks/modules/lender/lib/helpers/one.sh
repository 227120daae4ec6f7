helper_one=1
