class corpuslang::other {
  notify { 'other': }
}
