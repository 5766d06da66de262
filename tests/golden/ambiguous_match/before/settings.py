HTTP = {"timeout": 10, "retries": 3}
SMTP = {"timeout": 30, "retries": 3}
FTP = {"timeout": 60, "retries": 3}
