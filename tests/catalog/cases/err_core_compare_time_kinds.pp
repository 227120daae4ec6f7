# compare of a Timespan with a Timestamp.
notice(compare(Timespan(1), Timestamp(1)))
