define vuser ($uid) { user { $title: uid => $uid } }
@vuser { 'v1': uid => 10 }
@vuser { 'v2': uid => 11 }
Vuser <| title == 'v2' |>
