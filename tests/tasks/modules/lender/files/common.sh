lender_value=from-files
