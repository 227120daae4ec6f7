# stdlib's num2bool wants a number or a string that reads as one.
notice(num2bool('abc'))
