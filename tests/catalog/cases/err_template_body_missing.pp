# datacat's template_body of a template that does not exist.
$t = template_body('inline')
