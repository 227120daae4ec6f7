Write-Output '{"implementation": "windows.ps1"}'
