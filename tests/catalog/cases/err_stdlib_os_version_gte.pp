# stdlib's os_version_gte wants non-empty strings.
notice(os_version_gte('', '9'))
